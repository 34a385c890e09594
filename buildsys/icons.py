"""The web app manifest's PNG icons (web/app.webmanifest), drawn at build time with the standard
library: the page's logo, a white π on the accent colour (web/app.css `--accent`)."""

from __future__ import annotations

import hashlib
import shutil
import struct
import zlib
from pathlib import Path

from .config import CACHE

ACCENT = (0x33, 0x55, 0xD1)
WHITE = (0xFF, 0xFF, 0xFF)
# (file under the site, size in pixels, maskable): a maskable icon fills its square (the platform
# cuts its own shape out of it); the others are a rounded square on a transparent background.
ICONS = (
    ("icons/icon-192.png", 192, False),
    ("icons/icon-512.png", 512, False),
    ("icons/icon-maskable-512.png", 512, True),
    ("icons/apple-touch-icon.png", 180, True),
)
# The glyph, as rectangles in units of the icon's size: (left, top, right, bottom). All of it lies
# inside the central 60 %, so a maskable icon's glyph survives any mask (its safe zone is 80 %).
GLYPH = ((0.24, 0.28, 0.76, 0.37), (0.34, 0.28, 0.43, 0.74), (0.57, 0.28, 0.66, 0.74))


def _rounded_square_coverage(x: float, y: float, size: int, radius: float) -> float:
    """How much of the pixel centred on (x, y) lies inside the icon's rounded square (0..1)."""
    half = size / 2
    qx = abs(x - half) - (half - radius)
    qy = abs(y - half) - (half - radius)
    outside = (max(qx, 0.0) ** 2 + max(qy, 0.0) ** 2) ** 0.5
    distance = outside + min(max(qx, qy), 0.0) - radius
    return min(max(0.5 - distance, 0.0), 1.0)


def _span_coverage(lo: float, hi: float, pixel: int) -> float:
    """How much of [pixel, pixel + 1) lies in [lo, hi)."""
    return max(0.0, min(hi, pixel + 1) - max(lo, pixel))


def icon_pixels(size: int, maskable: bool) -> bytes:
    """RGBA rows, each with PNG's filter byte (0) in front."""
    radius = size * 0.22
    rects = [(left * size, top * size, right * size, bottom * size) for left, top, right, bottom in GLYPH]
    rows = bytearray()
    for py in range(size):
        rows.append(0)
        for px in range(size):
            alpha = 1.0 if maskable else _rounded_square_coverage(px + 0.5, py + 0.5, size, radius)
            glyph = 0.0
            for left, top, right, bottom in rects:
                glyph = max(glyph, _span_coverage(left, right, px) * _span_coverage(top, bottom, py))
            rgb = (round(a + (w - a) * glyph) for a, w in zip(ACCENT, WHITE, strict=True))
            rows.extend((*rgb, round(alpha * 255)))
    return bytes(rows)


def png(size: int, rows: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def write_icons(site: Path) -> list[str]:
    """Draw ICONS into the site (kept in .cache/icons/ by this module's digest: drawing them in
    pure Python takes seconds); their paths."""
    cached = CACHE / "icons" / hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    for rel, size, maskable in ICONS:
        source = cached / rel
        if not source.exists():
            source.parent.mkdir(parents=True, exist_ok=True)
            partial = source.with_name(source.name + ".part")
            partial.write_bytes(png(size, icon_pixels(size, maskable)))
            partial.replace(source)
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, site / rel)
    return [rel for rel, _, _ in ICONS]
