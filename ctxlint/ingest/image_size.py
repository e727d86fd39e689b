"""The pixel size of an image sent as base64, read from its header alone (PNG, JPEG, GIF,
WebP: the formats the providers take), without decoding the picture."""

from __future__ import annotations

import base64
import binascii
import struct

# JPEG's start-of-frame markers, which hold the frame's height and width (not DHT, JPG, DAC)
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# How much of a JPEG to read for its frame header, in base64 characters: its first segments
# (EXIF, ICC profiles, thumbnails) come before it and may be large
_JPEG_READS = (4_096, 131_072, 2_097_152)


def image_size(data: str) -> tuple[int, int] | None:
    """(width, height) of the image whose base64 `data` a request sends, or None when its
    header cannot be read (another format, or not base64)."""
    head = _decoded(data, 64)
    if head is None:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return struct.unpack("<HH", head[6:10])
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp(head)
    if head[:2] == b"\xff\xd8":
        for length in _JPEG_READS:
            found = _jpeg(_decoded(data, length) or b"")
            if found is not None or length >= len(data):
                return found
    return None


def _decoded(data: str, length: int) -> bytes | None:
    """The bytes the first `length` characters of base64 `data` hold (a whole number of
    quads), or None when they are not base64."""
    prefix = data[:length - length % 4] if len(data) > length else data[:len(data) - len(data) % 4]
    try:
        return base64.b64decode(prefix, validate=True)
    except (binascii.Error, ValueError):
        return None


def _webp(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:  # the canvas, each side less one, in 24 bits
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    if chunk == b"VP8L" and len(head) >= 25 and head[20] == 0x2F:  # 14 bits each, less one
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(head) >= 30 and head[23:26] == b"\x9d\x01\x2a":  # a key frame
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """The frame size a JPEG's start-of-frame segment holds, walking its segments."""
    position = 2
    while position + 9 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill bytes before a marker
            position += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            position += 2
            continue
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[position + 5:position + 9])
            return width, height
        if marker in (0xD9, 0xDA):  # the end, or the scan: no frame header before it
            return None
        position += 2 + struct.unpack(">H", data[position + 2:position + 4])[0]
    return None
