"""A child's stderr, of which only the tail is kept: a child writing gigabytes costs nothing.

roost quotes a child's last words when it fails (an MCP server that does not
start). Kept whole, a server's stderr once made roost hold 6 GB and print a
20 MB error line; here it is read as it is written and all but the last
``STDERR_TAIL`` bytes are dropped, and a quote is at most ``STDERR_QUOTE``
characters.
"""

from __future__ import annotations

import asyncio
import os
from typing import TextIO

STDERR_TAIL = 64 * 1024  # bytes of a child's stderr kept: the latest ones
STDERR_QUOTE = 300  # characters of it quoted in an error


class StderrTail:
    """A pipe for a child's stderr that keeps only the last ``STDERR_TAIL`` bytes written to it.

    The running loop reads the pipe as the child writes, so the child never blocks on a
    full pipe, and drops everything but the tail. ``writer`` is the end the child gets;
    ``child_started`` closes this process's copy of it once the child has been spawned.
    """

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._read_fd = read_fd
        self._tail = bytearray()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(read_fd, self._read_once)

    def child_started(self) -> None:
        self.writer.close()

    def last_line(self) -> str:
        """The last line the child wrote that is not blank, cut to ``STDERR_QUOTE`` characters."""
        # What the child wrote just before it stopped may not have been read yet (bounded:
        # a child that survived its kill may still be writing).
        for _ in range(16):
            if not self._read_once():
                break
        text = self._tail.decode("utf-8", "replace")
        lines = [" ".join(line.split()) for line in text.splitlines()]
        last = next((line for line in reversed(lines) if line), "")
        return last if len(last) <= STDERR_QUOTE else last[: STDERR_QUOTE - 3] + "..."

    def close(self) -> None:
        """Stops reading and gives both ends of the pipe back; safe to call twice."""
        self.writer.close()
        if self._read_fd >= 0:
            self._loop.remove_reader(self._read_fd)
            os.close(self._read_fd)
            self._read_fd = -1

    def _read_once(self) -> bool:
        """Reads one chunk into the tail; False when there was nothing (or the end of file)."""
        if self._read_fd < 0:
            return False
        try:
            chunk = os.read(self._read_fd, STDERR_TAIL)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self._loop.remove_reader(self._read_fd)
            return False
        self._tail += chunk
        if len(self._tail) > STDERR_TAIL:
            del self._tail[:-STDERR_TAIL]
        return True
