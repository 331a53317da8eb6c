"""``builtin#read_file``, ``write_file`` and ``list_files``: files under one root folder.

Every path a model gives is relative to the root. It is resolved (``..``
and symbolic links followed) and must still lie inside the resolved root, or
the call is refused: an absolute path, a ``..`` that climbs out, a link that
points out and a link loop all give an error result, never a file outside.
The last step opens with ``O_NOFOLLOW``, so a link that appears between the
check and the open is not followed either. Texts are UTF-8; what is read or
written is at most ``max_bytes``; a listing shows at most ``max_entries``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from roost.tools.refused import Refused

if TYPE_CHECKING:
    from collections.abc import Iterator

    from roost.flow.models import BuiltinFiles


class FileRoot:
    """The folder the file tools work in, with the limits of the flow's ``builtins.files``."""

    def __init__(self, root: Path, settings: BuiltinFiles) -> None:
        self.root = root
        self.max_bytes = settings.max_bytes
        self.max_entries = settings.max_entries

    def inside(self, path: str) -> Path:
        """The resolved path of ``path`` (relative to the root); Refused if it leads out."""
        if "\x00" in path:
            raise Refused("a path cannot hold a NUL character")
        if PurePosixPath(path).is_absolute() or Path(path).is_absolute():
            raise Refused(f"{path!r} is an absolute path: give a path relative to the root folder")
        root = self._resolved_root()
        try:
            target = (root / path).resolve()
        except RuntimeError:  # Python before 3.13 names a link loop this way
            raise Refused(f"{path!r} leads into a loop of symbolic links") from None
        except OSError as exc:
            raise Refused(f"{path!r} cannot be resolved: {exc.strerror}") from None
        if not target.is_relative_to(root):
            raise Refused(f"{path!r} is outside the root folder the file tools may use")
        return target

    def read(self, path: str) -> str:
        """The text of the file at ``path``."""
        target = self.inside(path)
        with _opened(path, target, os.O_RDONLY) as fd:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise Refused(f"{path!r} is a folder: list it with list_files")
            if not stat.S_ISREG(info.st_mode):
                raise Refused(f"{path!r} is not a regular file")
            data = _read_at_most(fd, self.max_bytes + 1)
        if len(data) > self.max_bytes:
            size = max(info.st_size, len(data))
            raise Refused(f"{path!r} has {size} bytes, over the limit of {self.max_bytes}")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"{path!r} is not UTF-8 text") from None

    def write(self, path: str, content: str, *, append: bool = False) -> str:
        """Writes ``content`` to ``path`` (its folders made as needed); says what it did."""
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, which JSON can carry
            raise Refused("the content is not valid Unicode text") from None
        if len(data) > self.max_bytes:
            raise Refused(f"the content has {len(data)} bytes, over the limit of {self.max_bytes}")
        target = self.inside(path)
        if target == self._resolved_root():
            raise Refused(f"{path!r} is the root folder itself, not a file")
        if append and _size(target) + len(data) > self.max_bytes:
            raise Refused(f"appending would make {path!r} larger than {self.max_bytes} bytes")
        # The folders are made under the resolved root, so none of them can be outside it.
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Refused(f"the folder of {path!r} cannot be made: {exc.strerror}") from None
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
        with _opened(path, target, flags) as fd:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(f"{path!r} is not a regular file")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        verb = "Appended" if append else "Wrote"
        return f"{verb} {len(data)} bytes to {self._shown(target)}."

    def listing(self, path: str, *, recursive: bool = False) -> str:
        """The entries of the folder at ``path``: one a line, folders ending in ``/``."""
        target = self.inside(path)
        if not target.is_dir():
            missing = not target.exists()
            raise Refused(f"{path!r} does not exist" if missing else f"{path!r} is not a folder")
        lines: list[str] = []
        for entry in _entries(target, recursive):
            if len(lines) == self.max_entries:
                lines.append(f"[more entries are not shown: the limit is {self.max_entries}]")
                break
            lines.append(self._line(entry))
        return "\n".join(lines) if lines else f"{self._shown(target)} is empty."

    def _line(self, entry: Path) -> str:
        shown = self._shown(entry)
        if entry.is_symlink():
            return f"{shown} (symbolic link)"
        if entry.is_dir():
            return f"{shown}/"
        return f"{shown} ({_size(entry)} bytes)"

    def _shown(self, path: Path) -> str:
        """``path`` as the model names it: relative to the root, never where the root is."""
        relative = path.relative_to(self._resolved_root()).as_posix()
        return relative if relative != "." else "."

    def _resolved_root(self) -> Path:
        try:
            root = self.root.resolve(strict=True)
        except (OSError, RuntimeError):
            raise Refused("the root folder of the file tools does not exist") from None
        if not root.is_dir():
            raise Refused("the root folder of the file tools is not a folder")
        return root


class _opened:
    """``os.open`` of a checked path, never following a link at its last step."""

    def __init__(self, shown: str, target: Path, flags: int) -> None:
        self._shown = shown
        self._target = target
        self._flags = flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        self._fd = -1

    def __enter__(self) -> int:
        try:
            # A FIFO would block an open for reading until a writer comes: never wait.
            self._fd = os.open(self._target, self._flags | os.O_NONBLOCK, 0o644)
        except FileNotFoundError:
            raise Refused(f"{self._shown!r} does not exist") from None
        except IsADirectoryError:
            raise Refused(f"{self._shown!r} is a folder") from None
        except OSError as exc:
            raise Refused(f"{self._shown!r} cannot be opened: {exc.strerror}") from None
        os.set_blocking(self._fd, True)
        return self._fd

    def __exit__(self, *_: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)


def _read_at_most(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _entries(folder: Path, recursive: bool) -> Iterator[Path]:
    """The entries under ``folder`` by name, folders entered (not links) when ``recursive``."""
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        yield entry
        if recursive and entry.is_dir() and not entry.is_symlink():
            yield from _entries(entry, recursive)
