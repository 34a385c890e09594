"""Files that try the page's limits, made quickly and small in memory (tests only).

- :func:`zip_bomb`: a DOCX or XLSX under 1 MB whose main part inflates to hundreds of MB, with a
  zip64 entry; the deflate stream is one compressed chunk repeated (each chunk ends with a full
  flush, so it stands alone), so nothing of the inflated size is ever held here.
- :func:`huge_png`: a PNG whose header claims a size it does not hold.
- :func:`many_page_pdf`: a PDF of thousands of pages sharing one content stream.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

__all__ = ["huge_png", "many_page_pdf", "zip_bomb"]

_CHUNK = 4 * 1024 * 1024
_FILLER = {"docx": b"<w:p/>", "xlsx": b"<row/>"}
_PARTS = {
    "docx": ("word/document.xml", b'<?xml version="1.0"?><w:document><w:body>'),
    "xlsx": ("xl/worksheets/sheet1.xml", b'<?xml version="1.0"?><worksheet><sheetData>'),
}
_CONTENT_TYPES = b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'


def _deflated_chunks(pattern: bytes, size: int) -> tuple[bytes, bytes, int, int]:
    """(chunk, tail, repeats, crc): ``repeats`` times ``chunk`` then ``tail`` inflate to ``size``
    bytes of ``pattern``."""
    plain = (pattern * (_CHUNK // len(pattern) + 1))[:_CHUNK]
    repeats, rest = divmod(size, _CHUNK)
    chunk = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = chunk.compress(plain) + chunk.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, zlib.DEFLATED, -15)
    tail = end.compress(plain[:rest]) + end.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(repeats):
        crc = zlib.crc32(plain, crc)
    return block, tail, repeats, zlib.crc32(plain[:rest], crc)


def zip_bomb(path: Path, kind: str = "docx", inflated: int = 400 * 1024 * 1024, declared: int | None = None) -> Path:
    """A ``kind`` document whose main part inflates to ``inflated`` bytes (declared as ``declared``,
    the truth by default: a lying size when given), stored as a zip64 entry."""
    name, _ = _PARTS[kind]
    block, tail, repeats, crc = _deflated_chunks(_FILLER[kind], inflated)
    packed = len(block) * repeats + len(tail)
    claimed = inflated if declared is None else declared
    with path.open("wb") as out:
        central: list[bytes] = []

        def stored(part: str, data: bytes) -> None:
            offset = out.tell()
            fields = (20, 0, 0, 0, 0x21, zlib.crc32(data), len(data), len(data), len(part), 0)
            out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields) + part.encode() + data)
            central.append(
                struct.pack("<IH", 0x02014B50, 20)
                + struct.pack("<HHHHHIIIHH", *fields)
                + struct.pack("<HHHII", 0, 0, 0, 0, offset)
                + part.encode()
            )

        stored("[Content_Types].xml", _CONTENT_TYPES)
        offset = out.tell()
        zip64 = struct.pack("<HHQQ", 1, 16, claimed, packed)
        fields = (45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), len(zip64))
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields) + name.encode() + zip64)
        for _ in range(repeats):
            out.write(block)
        out.write(tail)
        central.append(
            struct.pack("<IH", 0x02014B50, 45)
            + struct.pack("<HHHHHIIIHH", *fields)
            + struct.pack("<HHHII", 0, 0, 0, 0, offset)
            + name.encode()
            + zip64
        )
        start = out.tell()
        directory = b"".join(central)
        out.write(directory)
        out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), len(directory), start, 0))
    return path


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def huge_png(width: int = 30000, height: int = 30000) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` pixels (its data holds one row)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\0" + b"\0" * (3 * width))
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", data) + _png_chunk(b"IEND", b"")


def many_page_pdf(pages: int = 5000, text: str = "Page text of a long report") -> bytes:
    """A PDF of ``pages`` pages that all draw the same line of text (one shared content stream)."""
    content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (5 + n) for n in range(pages)) + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    )
    objects.extend(page for _ in range(pages))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
