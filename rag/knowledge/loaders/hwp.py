"""HWP 5 (한글 2002+, binary) loader: olefile + zlib over the BodyText/Section* record streams.

Best effort: what cannot be read goes into `warnings`. Record layout (Hancom's published "HWP 5.0" format):
a 32-bit header of tag (10 bits), level (10 bits) and size (12 bits; 0xFFF means a 32-bit size follows).
A paragraph is a PARA_HEADER whose PARA_TEXT child holds UTF-16LE text in which code units below 32
are controls; controls (tables, notes, headers) own deeper-level records with their own paragraphs.
"""

from __future__ import annotations

import io
import logging
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import olefile

from rag.errors import IngestError
from rag.knowledge.loaders.base import LoadedDocument
from rag.knowledge.loaders.textlines import (
    clean_metadata_title,
    join_text,
    read_source,
    table_lines,
    tidy_lines,
    title_in_text,
)

logger = logging.getLogger(__name__)

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
HWP_SIGNATURE = b"HWP Document File"

HWPTAG_BEGIN = 0x10
HWPTAG_PARA_HEADER = HWPTAG_BEGIN + 50
HWPTAG_PARA_TEXT = HWPTAG_BEGIN + 51  # 67
HWPTAG_CTRL_HEADER = HWPTAG_BEGIN + 55
HWPTAG_LIST_HEADER = HWPTAG_BEGIN + 56
HWPTAG_TABLE = HWPTAG_BEGIN + 61

# FileHeader property bits.
_COMPRESSED = 1 << 0
_PASSWORD = 1 << 1
_DISTRIBUTION = 1 << 2
_DRM = 1 << 4
_CERTIFICATE_ENCRYPTED = 1 << 8
_CERTIFICATE_DRM = 1 << 10

# Control codes that are one code unit long; every other code below 32 (inline and extended controls)
# occupies 8 units: the code, 6 units of parameters or an object pointer, and the code again.
_CHAR_CONTROLS = {0, 10, 13, 24, 25, 26, 27, 28, 29, 30, 31}
_CHAR_CONTROL_TEXT = {10: "\n", 24: "-", 30: " ", 31: " "}
_INLINE_CONTROL_TEXT = {9: "\t"}
_CONTROL_SIZE = 8
# Controls whose paragraphs are page furniture or annotations: header, footer, hidden comment.
_SKIPPED_CONTROLS = {b"head", b"foot", b"tcmt"}
_TABLE_CONTROL = b"tbl "
_SECTION = re.compile(r"^Section(\d+)$")
# A section larger than this after decompression is refused (a zip bomb, not a regulation).
_MAX_SECTION_BYTES = 256 * 1024 * 1024


@dataclass
class HwpRecord:
    """One record of a section stream, with the records nested under it (deeper levels)."""

    tag: int
    level: int
    payload: bytes
    children: list[HwpRecord] = field(default_factory=list)

    @property
    def control_id(self) -> bytes:
        """For a CTRL_HEADER: the 4-character id (`tbl `, `head`), stored as a little-endian integer."""
        return self.payload[:4][::-1]


class TruncatedRecords(ValueError):
    """The stream ended inside a record; the records before it are still usable."""

    def __init__(self, records: list[HwpRecord], offset: int) -> None:
        super().__init__(f"stream ends inside a record at byte {offset}")
        self.records = records


def parse_records(data: bytes) -> list[HwpRecord]:
    """The flat record list of a (decompressed) stream; raises TruncatedRecords on a cut-off stream."""
    records: list[HwpRecord] = []
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            raise TruncatedRecords(records, offset)
        (header,) = struct.unpack_from("<I", data, offset)
        start = offset
        offset += 4
        tag, level, size = header & 0x3FF, (header >> 10) & 0x3FF, header >> 20
        if size == 0xFFF:
            if offset + 4 > len(data):
                raise TruncatedRecords(records, start)
            (size,) = struct.unpack_from("<I", data, offset)
            offset += 4
        if offset + size > len(data):
            raise TruncatedRecords(records, start)
        records.append(HwpRecord(tag=tag, level=level, payload=data[offset:offset + size]))
        offset += size
    return records


def nest_records(records: list[HwpRecord]) -> list[HwpRecord]:
    """Records arranged as a tree by level: each record's children are the deeper records after it."""
    roots: list[HwpRecord] = []
    stack: list[HwpRecord] = []
    for record in records:
        record.children = []
        while stack and stack[-1].level >= record.level:
            stack.pop()
        (stack[-1].children if stack else roots).append(record)
        stack.append(record)
    return roots


def decode_para_text(payload: bytes) -> str:
    """PARA_TEXT → text: controls dropped (tab, line break, hyphen and fixed spaces kept as text)."""
    units = len(payload) // 2
    parts: list[str] = []
    start = index = 0
    while index < units:
        (code,) = struct.unpack_from("<H", payload, index * 2)
        if code >= 32:
            index += 1
            continue
        parts.append(payload[start * 2:index * 2].decode("utf-16-le", errors="replace"))
        if code in _CHAR_CONTROLS:
            parts.append(_CHAR_CONTROL_TEXT.get(code, ""))
            index += 1
        else:
            parts.append(_INLINE_CONTROL_TEXT.get(code, ""))
            index += _CONTROL_SIZE
        start = index
    parts.append(payload[start * 2:min(index, units) * 2].decode("utf-16-le", errors="replace"))
    return "".join(parts)


class SectionTextReader:
    """Lines of one section's record tree, in reading order; tables row by row."""

    def lines(self, roots: list[HwpRecord]) -> list[str]:
        lines: list[str] = []
        for record in roots:
            if record.tag == HWPTAG_PARA_HEADER:
                lines.extend(self._paragraph(record))
        return lines

    def _paragraph(self, header: HwpRecord) -> Iterator[str]:
        text = ""
        controls: list[HwpRecord] = []
        for child in header.children:
            if child.tag == HWPTAG_PARA_TEXT:
                text = decode_para_text(child.payload)
            elif child.tag == HWPTAG_CTRL_HEADER:
                controls.append(child)
        yield text
        for control in controls:
            yield from self._control(control)

    def _control(self, control: HwpRecord) -> Iterator[str]:
        if control.control_id in _SKIPPED_CONTROLS:
            return
        if control.control_id == _TABLE_CONTROL:
            yield from self._table(control)
            return
        # Footnotes, text boxes, captions: their paragraphs sit somewhere below the control.
        yield from self._nested_paragraphs(control.children)

    def _nested_paragraphs(self, records: list[HwpRecord]) -> Iterator[str]:
        for record in records:
            if record.tag == HWPTAG_PARA_HEADER:
                yield from self._paragraph(record)
            elif record.tag == HWPTAG_CTRL_HEADER:
                yield from self._control(record)
            else:
                yield from self._nested_paragraphs(record.children)

    def _table(self, control: HwpRecord) -> Iterator[str]:
        caption: list[str] = []
        cells: dict[tuple[int, int], list[str]] = {}
        current: list[str] | None = None
        seen_table = False
        for record in control.children:
            if record.tag == HWPTAG_TABLE:
                seen_table = True
            elif record.tag == HWPTAG_LIST_HEADER and seen_table:
                # Cell list header: paragraph count and flags (8 bytes), then column and row address.
                if len(record.payload) >= 12:
                    column, row = struct.unpack_from("<HH", record.payload, 8)
                else:
                    column, row = len(cells), 0
                current = cells.setdefault((row, column), [])
            elif record.tag == HWPTAG_PARA_HEADER:
                (current if seen_table and current is not None else caption).extend(self._paragraph(record))
        rows: dict[int, list[tuple[int, list[str]]]] = {}
        for (row, column), lines in cells.items():
            rows.setdefault(row, []).append((column, lines))
        yield from caption
        yield from table_lines([[lines for _, lines in sorted(rows[row])] for row in sorted(rows)])


class HwpLoader:
    """Loads HWP 5 `.hwp` files; password, distribution (배포용) and DRM documents are refused with a reason."""

    format = "hwp"
    extensions = (".hwp",)

    def sniff(self, head: bytes) -> bool:
        # HWP 3 files start with the signature itself; they are claimed here to be refused with a reason.
        return head.startswith(OLE_MAGIC) or head.startswith(HWP_SIGNATURE)

    def load(self, path: Path) -> LoadedDocument:
        raw = read_source(path)
        if raw.startswith(HWP_SIGNATURE):
            raise IngestError(
                f"{path.name}: HWP 3.0 format (한글 97 or older) is not supported; open it in 한글 and save it as "
                "HWP or HWPX"
            )
        try:
            ole = olefile.OleFileIO(io.BytesIO(raw))
        except Exception as exc:  # olefile raises OSError and assorted parse errors on damaged containers
            raise IngestError(
                f"{path.name}: damaged HWP file (the compound-file container is unreadable: {exc})"
            ) from exc
        with ole:
            return self._read(path, ole)

    def _read(self, path: Path, ole: olefile.OleFileIO) -> LoadedDocument:
        if not ole.exists("FileHeader"):
            raise IngestError(f"{path.name}: {_describe_other_ole(ole)}")
        header = _read_stream(ole, "FileHeader")
        if not header.startswith(HWP_SIGNATURE) or len(header) < 40:
            raise IngestError(f"{path.name}: not an HWP 5 document (its FileHeader has no HWP signature)")
        (version, flags) = struct.unpack_from("<II", header, 32)
        if version >> 24 != 5:
            raise IngestError(f"{path.name}: HWP format version {version >> 24} is not supported (only HWP 5)")
        _refuse_protected(path, flags)

        warnings: list[str] = []
        sections = sorted(
            (int(match.group(1)), entry)
            for entry in ole.listdir(streams=True, storages=False)
            if len(entry) == 2 and entry[0] == "BodyText" and (match := _SECTION.match(entry[1]))
        )
        blocks: list[list[str]] = []
        reader = SectionTextReader()
        for number, entry in sections:
            records = self._section_records(ole, entry, compressed=bool(flags & _COMPRESSED), warnings=warnings,
                                            label=f"section {number}")
            lines = tidy_lines(reader.lines(nest_records(records)))
            if lines:
                blocks.append(lines)
        if not blocks:
            preview = self._preview_text(ole)
            if preview:
                warnings.append("the body could not be read; only the preview text (the first page or so) was")
                blocks.append(preview)
            elif warnings:
                raise IngestError(f"{path.name}: no section of the HWP file could be read ({warnings[0]})")
            else:
                raise IngestError(f"{path.name}: the HWP document contains no text")
        text, _ = join_text(blocks)
        title = title_in_text(self._title(ole), text.splitlines())
        return LoadedDocument(path=str(path), format=self.format, text=text, title=title,
                              warnings=tuple(warnings))

    def _section_records(self, ole: olefile.OleFileIO, entry: list[str], *, compressed: bool,
                         warnings: list[str], label: str) -> list[HwpRecord]:
        data = _read_stream(ole, "/".join(entry))
        if compressed:
            inflater = zlib.decompressobj(-15)  # raw deflate, no zlib header
            try:
                data = inflater.decompress(data, _MAX_SECTION_BYTES)
            except zlib.error as exc:
                warnings.append(f"{label}: cannot be decompressed ({exc}); skipped")
                return []
            if inflater.unconsumed_tail:
                warnings.append(f"{label}: larger than {_MAX_SECTION_BYTES // 2**20} MB unpacked; the rest skipped")
            elif not inflater.eof:
                warnings.append(f"{label}: the compressed stream is cut short; read up to the cut")
        try:
            return parse_records(data)
        except TruncatedRecords as exc:
            warnings.append(f"{label}: {exc}; read {len(exc.records)} records before it")
            return exc.records

    def _preview_text(self, ole: olefile.OleFileIO) -> list[str]:
        if not ole.exists("PrvText"):
            return []
        text = _read_stream(ole, "PrvText").decode("utf-16-le", errors="replace")
        # The preview marks table cells with <…>; they are separate lines of text here.
        return tidy_lines(re.sub(r"[<>]", "\n", text).splitlines())

    def _title(self, ole: olefile.OleFileIO) -> str:
        if not ole.exists("\x05HwpSummaryInformation"):
            return ""
        try:
            properties = ole.getproperties("\x05HwpSummaryInformation", convert_time=False)
        except Exception:  # a damaged summary only costs the title
            logger.debug("hwp summary unreadable", exc_info=True)
            return ""
        title = properties.get(2, "")
        if isinstance(title, bytes):
            title = title.decode("utf-16-le", errors="replace")
        # olefile misreads the length of HWP's wide strings; the value ends at the first NUL.
        return clean_metadata_title(title)


def _read_stream(ole: olefile.OleFileIO, name: str) -> bytes:
    with ole.openstream(name) as stream:
        return stream.read()


def _refuse_protected(path: Path, flags: int) -> None:
    if flags & _PASSWORD:
        raise IngestError(
            f"{path.name}: password-protected HWP; open it in 한글, remove the document password and save it again"
        )
    if flags & _DISTRIBUTION:
        raise IngestError(
            f"{path.name}: HWP distribution document (배포용 문서), whose text is encrypted; ask its owner for the "
            "original HWP/HWPX or a PDF"
        )
    if flags & (_DRM | _CERTIFICATE_DRM | _CERTIFICATE_ENCRYPTED):
        raise IngestError(f"{path.name}: DRM-protected or certificate-encrypted HWP; it cannot be read outside 한글")


def _describe_other_ole(ole: olefile.OleFileIO) -> str:
    """What a compound file that is not HWP probably is, in words for the ingest report."""
    if ole.exists("EncryptedPackage"):
        return "password-protected Office document (Word/Excel/PowerPoint); save a copy without the password"
    if ole.exists("WordDocument"):
        return "legacy Word 97-2003 (.doc) file, which is not supported; save it as .docx"
    if ole.exists("Workbook") or ole.exists("Book") or ole.exists("PowerPoint Document"):
        return "Excel or PowerPoint file, which is not supported"
    return "not an HWP document (a compound file without an HWP FileHeader)"
