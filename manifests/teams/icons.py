"""Draws the Teams app icons with a tiny pure-Python PNG writer (zlib + struct, no imaging library).

    python manifests/teams/icons.py        # writes color.png (192×192) and outline.png (32×32) here

color.png: a white regulation document with text lines on the accent colour, full bleed.
outline.png: the same document as a white outline on a transparent background, as Teams requires.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

Pixel = tuple[int, int, int, int]  # RGBA
ACCENT: Pixel = (31, 111, 235, 255)  # #1F6FEB, the manifest's accentColor
WHITE: Pixel = (255, 255, 255, 255)
CLEAR: Pixel = (0, 0, 0, 0)
HERE = Path(__file__).resolve().parent


def encode_png(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """An RGBA PNG of `width`×`height` whose pixel (x, y) is `pixel(x, y)`."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter type: none
        for x in range(width):
            rows.extend(pixel(x, y))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _document(size: int) -> tuple[int, int, int, int, int]:
    """The document's box (left, top, right, bottom) and folded-corner size for an icon of `size`."""
    left, right = round(size * 0.26), round(size * 0.74)
    top, bottom = round(size * 0.16), round(size * 0.84)
    return left, top, right, bottom, round(size * 0.14)


def _text_lines(size: int) -> list[tuple[int, int, int, int]]:
    left, top, right, bottom, _ = _document(size)
    inset = round(size * 0.07)
    height = max(1, round(size * 0.035))
    rows = [top + round((bottom - top) * f) for f in (0.38, 0.53, 0.68)]
    widths = [1.0, 1.0, 0.6]
    return [
        (left + inset, row, left + inset + round((right - left - 2 * inset) * w), row + height)
        for row, w in zip(rows, widths, strict=True)
    ]


def color_pixel(x: int, y: int, size: int = 192) -> Pixel:
    left, top, right, bottom, fold = _document(size)
    inside = left <= x < right and top <= y < bottom and not (x - (right - fold) > y - top)
    if not inside:
        return ACCENT
    if x >= right - fold and y < top + fold:
        return (200, 220, 252, 255)  # the folded corner
    if any(x0 <= x < x1 and y0 <= y < y1 for x0, y0, x1, y1 in _text_lines(size)):
        return ACCENT
    return WHITE


def outline_pixel(x: int, y: int, size: int = 32) -> Pixel:
    left, top, right, bottom, fold = _document(size)
    on_edge = (
        (x in (left, right - 1) and top <= y < bottom and not (x == right - 1 and y < top + fold))
        or (y in (top, bottom - 1) and left <= x < right and not (y == top and x >= right - fold))
        or (x - (right - fold) == y - top and right - fold <= x < right)  # the fold's diagonal
    )
    on_line = any(x0 <= x < x1 and y0 <= y < y1 for x0, y0, x1, y1 in _text_lines(size))
    return WHITE if on_edge or on_line else CLEAR


def write_icons(folder: Path = HERE) -> tuple[Path, Path]:
    """Write color.png and outline.png into `folder`."""
    color = folder / "color.png"
    outline = folder / "outline.png"
    color.write_bytes(encode_png(192, 192, color_pixel))
    outline.write_bytes(encode_png(32, 32, outline_pixel))
    return color, outline


if __name__ == "__main__":
    for path in write_icons():
        print(path)
