"""HwpLoader and its record parser: control codes, nesting, tables, protected files, non-HWP files."""

from __future__ import annotations

import struct

import pytest

from rag.errors import IngestError
from rag.knowledge.loaders.hwp import (
    HwpLoader,
    SectionTextReader,
    TruncatedRecords,
    decode_para_text,
    nest_records,
    parse_records,
)
from tests.unit.rag.knowledge.loaders.document_factories import (
    SAMPLE_LINES,
    hwp_control,
    hwp_paragraph,
    hwp_record,
    make_hwp,
    make_ole,
    write,
)

PARA_TEXT, CTRL_HEADER, LIST_HEADER, TABLE = 67, 71, 72, 77


def _control_header(control_id: bytes, level: int) -> bytes:
    """CTRL_HEADER: the 4-character id as a little-endian integer, then (unused here) properties."""
    return hwp_record(CTRL_HEADER, level, control_id[::-1] + b"\0" * 8)


def _cell(column: int, row: int, text: str, level: int) -> bytes:
    """A table cell: LIST_HEADER (paragraph count, flags, column, row, spans) and its paragraph."""
    header = struct.pack("<hHIHHHH", 1, 0, 0, column, row, 1, 1) + b"\0" * 20
    return hwp_record(LIST_HEADER, level, header) + hwp_paragraph(text, level)


def _table(rows: list[list[str]], level: int = 1) -> bytes:
    cells = b"".join(_cell(c, r, text, level + 1) for r, row in enumerate(rows) for c, text in enumerate(row))
    return _control_header(b"tbl ", level) + hwp_record(TABLE, level + 1, b"\0" * 24) + cells


class TestDecodeParaText:
    def test_plain_text_ends_at_the_paragraph_break(self):
        assert decode_para_text("제1조(목적) 이 규칙은".encode("utf-16-le") + b"\r\0") == "제1조(목적) 이 규칙은"

    def test_extended_and_inline_controls_are_skipped_as_eight_units(self):
        payload = (hwp_control(2) + "제2조".encode("utf-16-le") + hwp_control(11) + "(정의)".encode("utf-16-le")
                   + hwp_control(9) + "직원".encode("utf-16-le") + b"\r\0")
        assert decode_para_text(payload) == "제2조(정의)\t직원"

    def test_char_controls_take_one_unit(self):
        payload = "근무".encode("utf-16-le") + struct.pack("<H", 10) + "시간".encode("utf-16-le") \
            + struct.pack("<H", 24) + "제".encode("utf-16-le") + struct.pack("<H", 31) + b"\r\0"
        assert decode_para_text(payload) == "근무\n시간-제 "

    def test_characters_outside_the_basic_plane_survive(self):
        assert decode_para_text("𠀀 한자".encode("utf-16-le")) == "𠀀 한자"

    def test_a_control_cut_off_at_the_end_does_not_fail(self):
        assert decode_para_text("본문".encode("utf-16-le") + struct.pack("<H", 11) + b"\0\0") == "본문"


class TestRecords:
    def test_parses_normal_and_extended_size_records(self):
        big = b"x" * 5000
        records = parse_records(hwp_record(66, 0, b"\0" * 22) + hwp_record(PARA_TEXT, 1, big))
        assert [(r.tag, r.level, len(r.payload)) for r in records] == [(66, 0, 22), (PARA_TEXT, 1, 5000)]

    def test_a_cut_off_stream_keeps_the_records_before_the_cut(self):
        data = hwp_paragraph("첫 문단") + hwp_paragraph("둘째 문단")
        with pytest.raises(TruncatedRecords) as caught:
            parse_records(data[:-3])
        assert [r.tag for r in caught.value.records] == [66, PARA_TEXT, 66]

    def test_nesting_follows_levels(self):
        roots = nest_records(parse_records(hwp_paragraph("표가 있는 문단", children=_table([["가", "나"]]))))
        assert [r.tag for r in roots] == [66]
        assert [r.tag for r in roots[0].children] == [PARA_TEXT, CTRL_HEADER]
        assert [r.tag for r in roots[0].children[1].children] == [TABLE, LIST_HEADER, 66, LIST_HEADER, 66]


class TestSectionTextReader:
    def lines(self, data: bytes) -> list[str]:
        return SectionTextReader().lines(nest_records(parse_records(data)))

    def test_table_cells_are_read_row_by_row(self):
        data = hwp_paragraph("제4조(휴가) 휴가 일수는 다음과 같다.") + hwp_paragraph(
            hwp_control(11) + b"\r\0", children=_table([["구분", "일수"], ["연차휴가", "15일"]])
        )
        assert [line for line in self.lines(data) if line] == [
            "제4조(휴가) 휴가 일수는 다음과 같다.", "구분 | 일수", "연차휴가 | 15일",
        ]

    def test_header_and_footer_paragraphs_are_skipped(self):
        header = _control_header(b"head", 1) + hwp_record(LIST_HEADER, 2, b"\0" * 8) + hwp_paragraph("대외비", 2)
        footnote = _control_header(b"fn  ", 1) + hwp_record(LIST_HEADER, 2, b"\0" * 8) + hwp_paragraph("주석", 2)
        data = hwp_paragraph(hwp_control(16) + hwp_control(17) + "본문".encode("utf-16-le") + b"\r\0",
                             children=header + footnote)
        assert self.lines(data) == ["본문", "주석"]


class TestHwpLoader:
    def test_reads_a_compressed_document_with_its_title(self, tmp_path):
        section = b"".join(hwp_paragraph(line) for line in SAMPLE_LINES)
        loaded = HwpLoader().load(write(tmp_path, "rules.hwp", make_hwp([section], title="한빛 취업규칙")))

        assert loaded.format == "hwp"
        assert loaded.title == "한빛 취업규칙"
        assert loaded.text.splitlines() == SAMPLE_LINES
        assert loaded.warnings == ()

    def test_reads_uncompressed_sections_in_order(self, tmp_path):
        first = b"".join(hwp_paragraph(line) for line in SAMPLE_LINES[:5])
        second = b"".join(hwp_paragraph(line) for line in SAMPLE_LINES[5:])
        loaded = HwpLoader().load(write(tmp_path, "rules.hwp", make_hwp([first, second], compressed=False)))
        assert loaded.text.splitlines() == [*SAMPLE_LINES[:5], "", *SAMPLE_LINES[5:]]

    def test_a_truncated_section_is_read_up_to_the_cut_with_a_warning(self, tmp_path):
        section = b"".join(hwp_paragraph(line) for line in SAMPLE_LINES)
        cut = section[: section.index("부칙".encode("utf-16-le")) - 2]
        loaded = HwpLoader().load(write(tmp_path, "cut.hwp", make_hwp([cut], compressed=False)))

        assert loaded.text.splitlines() == SAMPLE_LINES[:7]
        assert len(loaded.warnings) == 1
        assert loaded.warnings[0].startswith("section 0: stream ends inside a record")

    @pytest.mark.parametrize(("flags", "reason"), [
        (1 << 1, "password-protected HWP"),
        (1 << 2, r"HWP distribution document \(배포용 문서\)"),
        (1 << 4, "DRM-protected"),
    ])
    def test_protected_documents_are_refused_with_a_reason(self, tmp_path, flags, reason):
        hwp = make_hwp([hwp_paragraph("암호화된 본문")], flags=flags)
        with pytest.raises(IngestError, match=rf"^locked\.hwp: {reason}"):
            HwpLoader().load(write(tmp_path, "locked.hwp", hwp))

    def test_hwp_3_file_is_refused_with_a_reason(self, tmp_path):
        with pytest.raises(IngestError, match=r"^old\.hwp: HWP 3\.0 format \(한글 97 or older\) is not supported"):
            HwpLoader().load(write(tmp_path, "old.hwp", b"HWP Document File V3.00 \x1a\x01\x02\x03\x04\x05"))

    @pytest.mark.parametrize(("streams", "reason"), [
        ({"WordDocument": b"\0" * 64}, r"legacy Word 97-2003 \(\.doc\) file"),
        ({"EncryptedPackage": b"\0" * 64, "EncryptionInfo": b"\0" * 64}, "password-protected Office document"),
        ({"Contents": b"\0" * 64}, "not an HWP document"),
    ])
    def test_other_compound_files_are_named_in_the_error(self, tmp_path, streams, reason):
        with pytest.raises(IngestError, match=rf"^other\.hwp: {reason}"):
            HwpLoader().load(write(tmp_path, "other.hwp", make_ole(streams)))

    def test_garbage_after_the_ole_magic_is_a_damaged_file(self, tmp_path):
        data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x07" * 600
        with pytest.raises(IngestError, match=r"^broken\.hwp: damaged HWP file"):
            HwpLoader().load(write(tmp_path, "broken.hwp", data))

    def test_document_without_text_is_reported(self, tmp_path):
        hwp = make_hwp([hwp_record(66, 0, b"\0" * 22)])
        with pytest.raises(IngestError, match=r"^blank\.hwp: the HWP document contains no text$"):
            HwpLoader().load(write(tmp_path, "blank.hwp", hwp))
