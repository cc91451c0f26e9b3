"""Builders for small test documents in every format, written from our own sample text.

No binary fixtures are checked in: each test makes the file it reads. The PDF and compound-file (OLE)
writers are minimal but valid: pypdf and olefile read them as they would a real file.
"""

from __future__ import annotations

import io
import itertools
import struct
import zipfile
import zlib
from pathlib import Path

# -- sample regulation (our own wording) --------------------------------------------------------

SAMPLE_TITLE = "한빛 취업규칙"
SAMPLE_LINES = [
    "한빛 취업규칙",
    "제1장 총칙",
    "제1조(목적) 이 규칙은 주식회사 한빛 직원의 근무 조건과 복무 질서를 정한다.",
    "제2조(적용 범위) ① 이 규칙은 회사와 근로계약을 맺은 모든 직원에게 적용한다.",
    "② 이 규칙에 정하지 않은 사항은 관계 법령에 따른다.",
    "제2장 근무",
    "제3조(근무시간) 근무시간은 하루 8시간, 1주 40시간으로 한다.",
    "부칙",
    "이 규칙은 2025년 1월 1일부터 시행한다.",
]

# -- PDF ----------------------------------------------------------------------------------------


def make_pdf(pages: list[list[str]], *, title: str | None = None, font_size: int = 10) -> bytes:
    """A PDF whose pages show `pages` (one string per text line), any Unicode text included.

    Text is drawn with a Type0 font (Identity-H) that maps one glyph id per distinct character and
    carries a ToUnicode map, which is what text extraction reads; no font program is embedded.
    """
    chars = sorted({ch for lines in pages for line in lines for ch in line})
    cid = {ch: index + 1 for index, ch in enumerate(chars)}
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    def stream(data: bytes, extra: bytes = b"") -> bytes:
        return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"

    catalog = add(b"")  # filled in once the page tree exists
    pages_id = add(b"")
    cmap_entries = [b"<%04X> <%s>" % (cid[ch], ch.encode("utf-16-be").hex().upper().encode()) for ch in chars]
    cmap = (b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
            b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            b"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
            b"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
    for start in range(0, len(chars), 100):
        chunk = cmap_entries[start:start + 100]
        cmap += b"%d beginbfchar\n" % len(chunk) + b"\n".join(chunk) + b"\nendbfchar\n"
    cmap += b"endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend"
    to_unicode = add(stream(cmap))
    descendant = add(b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /RegbotSans "
                     b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 >>")
    font = add(b"<< /Type /Font /Subtype /Type0 /BaseFont /RegbotSans /Encoding /Identity-H "
               b"/DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>" % (descendant, to_unicode))
    page_ids = []
    for lines in pages:
        ops = [b"BT", b"/F1 %d Tf" % font_size, b"%d TL" % (font_size + 4), b"40 800 Td"]
        for line in lines:
            glyphs = "".join(f"{cid[ch]:04X}" for ch in line).encode()
            ops.append(b"<%s> Tj T*" % glyphs)
        ops.append(b"ET")
        content = add(stream(b"\n".join(ops)))
        page_ids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] "
                            b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
                            % (pages_id, font, content)))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id
    kids = b" ".join(b"%d 0 R" % page for page in page_ids)
    objects[pages_id - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
    info = add(b"<< /Title <FEFF%s> >>" % title.encode("utf-16-be").hex().upper().encode()) if title else None

    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    out += (b" /Info %d 0 R" % info if info else b"") + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


# -- HWPX ---------------------------------------------------------------------------------------

HWPX_NS = ('xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph" '
           'xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section" '
           'xmlns:hh="http://www.hancom.co.kr/hwpml/2011/head"')


def hwpx_paragraph(text: str, *, para_pr: str = "0") -> str:
    """An hp:p with one run; "\\t" and "\\n" become hp:tab and hp:lineBreak."""
    inner = (text.replace("&", "&amp;").replace("<", "&lt;")
             .replace("\t", "<hp:tab/>").replace("\n", "<hp:lineBreak/>"))
    return f'<hp:p paraPrIDRef="{para_pr}"><hp:run charPrIDRef="0"><hp:t>{inner}</hp:t></hp:run></hp:p>'


def hwpx_section(body: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><hs:sec {HWPX_NS}>{body}</hs:sec>'


def make_hwpx(sections: dict[int, str], *, title: str | None = None, header: str | None = None,
              extra: dict[str, bytes] | None = None) -> bytes:
    """An HWPX zip: mimetype first (stored), Contents/section{N}.xml, optional content.hpf and header.xml."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/hwp+zip", compress_type=zipfile.ZIP_STORED)
        if title is not None:
            archive.writestr("Contents/content.hpf", (
                '<?xml version="1.0" encoding="UTF-8"?><opf:package xmlns:opf="http://www.idpf.org/2007/opf/">'
                f"<opf:metadata><opf:title>{title}</opf:title></opf:metadata></opf:package>"))
        if header is not None:
            archive.writestr("Contents/header.xml",
                             f'<?xml version="1.0" encoding="UTF-8"?><hh:head {HWPX_NS}>{header}</hh:head>')
        for number, xml in sections.items():
            archive.writestr(f"Contents/section{number}.xml", xml, compress_type=zipfile.ZIP_DEFLATED)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


# -- HWP 5 (records inside a compound file) -----------------------------------------------------


def hwp_record(tag: int, level: int, payload: bytes) -> bytes:
    """One record: tag, level and size packed in 32 bits; sizes ≥ 0xFFF use the extended form."""
    if len(payload) >= 0xFFF:
        return struct.pack("<II", tag | (level << 10) | (0xFFF << 20), len(payload)) + payload
    return struct.pack("<I", tag | (level << 10) | (len(payload) << 20)) + payload


def hwp_text(text: str) -> bytes:
    """PARA_TEXT payload: UTF-16LE text ending with the paragraph-break control (13)."""
    return text.encode("utf-16-le") + struct.pack("<H", 13)


def hwp_control(code: int, info: bytes = b"\0" * 12) -> bytes:
    """An inline or extended control in PARA_TEXT: the code, 12 bytes of info, the code again."""
    return struct.pack("<H", code) + info + struct.pack("<H", code)


def hwp_paragraph(text: str | bytes, level: int = 0, children: bytes = b"") -> bytes:
    """PARA_HEADER + PARA_TEXT (`text` as str, or a ready payload) + the paragraph's control records."""
    payload = hwp_text(text) if isinstance(text, str) else text
    return hwp_record(66, level, b"\0" * 22) + hwp_record(67, level + 1, payload) + children


def hwp_file_header(*, compressed: bool = True, flags: int = 0, version: int = 0x05010100) -> bytes:
    header = b"HWP Document File".ljust(32, b"\0")
    return header + struct.pack("<II", version, flags | (1 if compressed else 0)) + b"\0" * 216


def hwp_summary(title: str) -> bytes:
    """A \\x05HwpSummaryInformation property set with the title (PIDSI_TITLE = 2) as VT_LPWSTR."""
    chars = (title + "\0").encode("utf-16-le")
    value = struct.pack("<II", 0x1F, len(chars) // 2) + chars
    value += b"\0" * (-len(value) % 4)
    section = struct.pack("<II", 8 + 8 + len(value), 1) + struct.pack("<II", 2, 16) + value
    fmtid = bytes.fromhex("e0859ff2f94f6810ab9108002b27b3d9")
    header = struct.pack("<HHI", 0xFFFE, 0, 0x00020006) + b"\0" * 16 + struct.pack("<I", 1)
    return header + fmtid + struct.pack("<I", 48) + section


def make_hwp(sections: list[bytes], *, compressed: bool = True, flags: int = 0, title: str | None = None) -> bytes:
    """An HWP 5 file: FileHeader, BodyText/Section{N} (raw-deflated when `compressed`), optional summary."""
    streams = {"FileHeader": hwp_file_header(compressed=compressed, flags=flags), "DocInfo": b"\0" * 16}
    for number, records in enumerate(sections):
        if compressed:
            packer = zlib.compressobj(wbits=-15)
            records = packer.compress(records) + packer.flush()
        streams[f"BodyText/Section{number}"] = records
    if title is not None:
        streams["\x05HwpSummaryInformation"] = hwp_summary(title)
    return make_ole(streams)


_SECTOR = 512
_MINI_SECTOR = 64
_MINI_CUTOFF = 4096
_FREE, _END_OF_CHAIN, _FAT_SECTOR = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD


def make_ole(streams: dict[str, bytes]) -> bytes:
    """A minimal compound file (CFB version 3, 512-byte sectors) holding `streams`, keyed by "a/b" paths.

    Small streams live in the mini stream, as the format requires; siblings are chained through their
    right-sibling links (a degenerate but valid tree).
    """
    # Directory: root, then storages and streams in path order.
    entries: list[dict] = [{"name": "Root Entry", "type": 5, "children": [], "data": b""}]
    index: dict[str, int] = {"": 0}
    for path in sorted(streams):
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            key = "/".join(parts[:depth])
            if key in index:
                continue
            is_stream = depth == len(parts)
            index[key] = len(entries)
            entries.append({"name": parts[depth - 1], "type": 2 if is_stream else 1, "children": [],
                            "data": streams[path] if is_stream else b""})
            entries[index["/".join(parts[:depth - 1])]]["children"].append(index[key])

    sectors: list[bytes] = []
    fat: list[int] = []

    def allocate(data: bytes) -> int:
        """Writes `data` into new sectors chained in the FAT; returns the first sector id."""
        count = max(1, -(-len(data) // _SECTOR))
        first = len(sectors)
        for offset in range(count):
            sectors.append(data[offset * _SECTOR:(offset + 1) * _SECTOR].ljust(_SECTOR, b"\0"))
            fat.append(first + offset + 1 if offset + 1 < count else _END_OF_CHAIN)
        return first

    mini_stream = bytearray()
    mini_fat: list[int] = []
    for entry in entries[1:]:
        data = entry["data"]
        if entry["type"] != 2 or not data:
            entry["start"] = _END_OF_CHAIN if entry["type"] == 2 else 0
            continue
        if len(data) < _MINI_CUTOFF:
            count = -(-len(data) // _MINI_SECTOR)
            first = len(mini_stream) // _MINI_SECTOR
            mini_stream += data.ljust(count * _MINI_SECTOR, b"\0")
            mini_fat += [first + i + 1 for i in range(count - 1)] + [_END_OF_CHAIN]
            entry["start"] = first
        else:
            entry["start"] = allocate(data)
    entries[0]["start"] = allocate(bytes(mini_stream)) if mini_stream else _END_OF_CHAIN
    entries[0]["size"] = len(mini_stream)
    mini_fat_start = allocate(b"".join(struct.pack("<I", v) for v in mini_fat)) if mini_fat else _END_OF_CHAIN
    mini_fat_sectors = -(-len(mini_fat) * 4 // _SECTOR)

    for entry in entries:
        kids = entry["children"]
        entry["child"] = kids[0] if kids else _FREE
        for left, right in itertools.pairwise(kids):
            entries[left]["right"] = right
    directory = b"".join(_directory_entry(entry) for entry in entries)
    directory_start = allocate(directory)

    # FAT sectors describe every sector, themselves included.
    fat_sectors = 1
    while (len(sectors) + fat_sectors) * 4 > fat_sectors * _SECTOR:
        fat_sectors += 1
    fat_start = len(sectors)
    fat += [_FAT_SECTOR] * fat_sectors
    fat += [_FREE] * (fat_sectors * _SECTOR // 4 - len(fat))
    fat_bytes = b"".join(struct.pack("<I", v) for v in fat)
    for offset in range(fat_sectors):
        sectors.append(fat_bytes[offset * _SECTOR:(offset + 1) * _SECTOR])

    difat = [fat_start + i for i in range(fat_sectors)] + [_FREE] * (109 - fat_sectors)
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 16
              + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6) + b"\0" * 6
              + struct.pack("<IIIIIIIII", 0, fat_sectors, directory_start, 0, _MINI_CUTOFF,
                            mini_fat_start, mini_fat_sectors, _END_OF_CHAIN, 0)
              + b"".join(struct.pack("<I", v) for v in difat))
    return header.ljust(_SECTOR, b"\0") + b"".join(sectors)


def _directory_entry(entry: dict) -> bytes:
    name = entry["name"].encode("utf-16-le") + b"\0\0"
    size = entry.get("size", len(entry["data"]))
    return (name.ljust(64, b"\0") + struct.pack("<HBB", len(name), entry["type"], 1)
            + struct.pack("<III", _FREE, entry.get("right", _FREE), entry["child"])
            + b"\0" * 16 + b"\0" * 4 + b"\0" * 16
            + struct.pack("<IQ", entry.get("start", _END_OF_CHAIN), size))


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    """Writes `data` to tmp_path/name and returns the path."""
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path
