"""Small real images for tests: PNGs made with zlib (any browser or API decodes them) and
a GIF, written as the image formats define them."""

from __future__ import annotations

import struct
import zlib
from hashlib import sha256

# The smallest GIF: one transparent pixel (GIF89a).
GIF = bytes.fromhex(
    "47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b"
)


def png(color: tuple[int, int, int] = (200, 30, 30), size: int = 4) -> bytes:
    """A ``size`` by ``size`` PNG of one colour."""
    row = b"\x00" + bytes(color) * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(row * size))
        + _chunk(b"IEND", b"")
    )


def digest(data: bytes) -> str:
    return "sha256:" + sha256(data).hexdigest()


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
