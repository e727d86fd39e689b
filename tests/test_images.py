"""The size of an image sent as base64, read from its header (ingest.image_size), and the
limits CTX046 judges that no case file can hold (base64 data of 5 and 10 MB)."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

from helpers import json_report, located_findings, write_records
from ctxlint.ingest.image_size import image_size


def _png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    chunk = b"IHDR" + header
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(header)) + chunk + struct.pack(">I", zlib.crc32(chunk))


def _jpeg(width: int, height: int, exif: int) -> bytes:
    """A JPEG's segments up to its frame header, after an EXIF segment `exif` bytes long."""
    app1 = b"\xff\xe1" + struct.pack(">H", exif + 2) + b"Exif\x00\x00" + bytes(exif - 6)
    frame = b"\xff\xc2" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"  # progressive
    return b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + bytes(9) + app1 + frame + b"\xff\xd9"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("data, size", [
    (_png(1440, 9000), (1440, 9000)),
    (_jpeg(5000, 3000, 100), (5000, 3000)),
    (_jpeg(2560, 1440, 60_000), (2560, 1440)),  # past the first read: the walk reads on
    (b"GIF89a" + struct.pack("<HH", 640, 480) + bytes(8), (640, 480)),
    (b"RIFF" + bytes(4) + b"WEBPVP8X" + bytes(8) + (3199).to_bytes(3, "little") + (1799).to_bytes(3, "little"), (3200, 1800)),
    (b"RIFF" + bytes(4) + b"WEBPVP8L" + bytes(4) + b"\x2f" + ((320 - 1) | (240 - 1) << 14).to_bytes(4, "little"), (320, 240)),
    (b"RIFF" + bytes(4) + b"WEBPVP8 " + bytes(7) + b"\x9d\x01\x2a" + struct.pack("<HH", 330, 250), (330, 250)),
])
def test_the_size_is_read_from_the_header(data, size):
    assert image_size(_b64(data)) == size


@pytest.mark.parametrize("data", ["", "not base64!", _b64(b"hello, world"), _b64(b"\xff\xd8\xff\xd9"), _b64(b"\x89PNG\r\n\x1a\n")])
def test_what_is_no_image_it_knows_has_no_size(data):
    assert image_size(data) is None


def _request(data: str, **body) -> dict:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    return {"max_tokens": 512, "messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"}, image]}], **body}


def _padded(length: int) -> str:
    """Base64 `length` characters long that opens with a small PNG's header."""
    head = _b64(_png(800, 600))
    return head + "A" * (length - len(head))


def test_base64_data_past_ten_mb_is_refused_and_five_mb_on_the_clouds(tmp_path):
    direct = [{"session_id": "big", "request": _request(_padded(10_485_764), model="claude-sonnet-4-6")},
              {"session_id": "at", "request": _request(_padded(10_485_760), model="claude-sonnet-4-6")},
              {"session_id": "five", "request": _request(_padded(5_242_884), model="claude-sonnet-4-6")}]
    report = json_report(write_records(tmp_path / "direct.jsonl", direct))
    assert located_findings(report) == [("CTX046", 1, 0, "/messages/0/content/1", None)]
    assert "10,485,764 characters of base64, more than the 10,485,760" in report["findings"][0]["message"]
    url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke"
    cloud = [{"session_id": "five", "url": url, "request": _request(_padded(5_242_884), anthropic_version="bedrock-2023-05-31")},
             {"session_id": "under", "url": url, "request": _request(_padded(5_242_880), anthropic_version="bedrock-2023-05-31")},
             {"session_id": "ten", "url": url, "request": _request(_padded(10_485_764), anthropic_version="bedrock-2023-05-31")}]
    report = json_report(write_records(tmp_path / "bedrock.jsonl", cloud))
    assert [(f["code"], f["line"], f["evidence"]["most"]) for f in report["findings"]] == [("CTX046", 1, 5_242_880), ("CTX046", 3, 5_242_880)]
