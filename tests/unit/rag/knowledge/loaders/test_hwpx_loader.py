"""HwpxLoader: sections in numeric order, runs and tables, 문단 번호, and the refusals users see."""

from __future__ import annotations

import pytest

from rag.errors import IngestError
from rag.knowledge.loaders.hwpx import HwpxLoader
from tests.unit.rag.knowledge.loaders.document_factories import (
    SAMPLE_LINES,
    hwpx_paragraph,
    hwpx_section,
    make_hwpx,
    write,
)

TABLE = (
    '<hp:p paraPrIDRef="0"><hp:run charPrIDRef="0"><hp:tbl rowCnt="2" colCnt="2">'
    "<hp:tr><hp:tc><hp:subList>{}</hp:subList></hp:tc><hp:tc><hp:subList>{}</hp:subList></hp:tc></hp:tr>"
    "<hp:tr><hp:tc><hp:subList>{}</hp:subList></hp:tc><hp:tc><hp:subList>{}</hp:subList></hp:tc></hp:tr>"
    "</hp:tbl></hp:run></hp:p>"
).format(*(hwpx_paragraph(text) for text in ("구분", "일수", "연차휴가", "15일")))

HEADER_AND_FOOTER = (
    '<hp:p paraPrIDRef="0"><hp:run charPrIDRef="0"><hp:ctrl>'
    "<hp:header><hp:subList>" + hwpx_paragraph("머리말: 대외비") + "</hp:subList></hp:header>"
    "<hp:footer><hp:subList>" + hwpx_paragraph("- 쪽 번호 -") + "</hp:subList></hp:footer>"
    "</hp:ctrl></hp:run></hp:p>"
)

# 문단 번호 1: level 1 renders "제N조", level 2 a circled number.
NUMBERING_HEADER = (
    '<hh:refList><hh:numberings><hh:numbering id="1" start="0">'
    '<hh:paraHead start="1" level="1" numFormat="DIGIT">제^1조</hh:paraHead>'
    '<hh:paraHead start="1" level="2" numFormat="CIRCLED_DIGIT">^2</hh:paraHead>'
    "</hh:numbering></hh:numberings><hh:paraProperties>"
    '<hh:paraPr id="0"><hh:heading type="NONE" idRef="0" level="0"/></hh:paraPr>'
    '<hh:paraPr id="5"><hh:heading type="NUMBER" idRef="1" level="0"/></hh:paraPr>'
    '<hh:paraPr id="6"><hh:heading type="NUMBER" idRef="1" level="1"/></hh:paraPr>'
    "</hh:paraProperties></hh:refList>"
)


class TestHwpxLoader:
    def test_reads_sections_in_numeric_order_with_the_package_title(self, tmp_path):
        sections = {
            0: hwpx_section("".join(hwpx_paragraph(line) for line in SAMPLE_LINES[:3])),
            10: hwpx_section(hwpx_paragraph("부칙") + hwpx_paragraph(SAMPLE_LINES[-1])),
            2: hwpx_section("".join(hwpx_paragraph(line) for line in SAMPLE_LINES[5:7])),
            1: hwpx_section("".join(hwpx_paragraph(line) for line in SAMPLE_LINES[3:5])),
        }
        loaded = HwpxLoader().load(write(tmp_path, "rules.hwpx", make_hwpx(sections, title="한빛 취업규칙")))

        assert loaded.format == "hwpx"
        assert loaded.title == "한빛 취업규칙"
        assert [line for line in loaded.text.splitlines() if line] == SAMPLE_LINES
        assert loaded.pages == ()

    def test_tables_become_rows_and_page_furniture_is_skipped(self, tmp_path):
        body = (HEADER_AND_FOOTER + hwpx_paragraph("제4조(휴가) 휴가 일수는 다음과 같다.") + TABLE
                + hwpx_paragraph("제5조(신청)\t휴가는 미리\n신청한다."))
        loaded = HwpxLoader().load(write(tmp_path, "leave.hwpx", make_hwpx({0: hwpx_section(body)})))

        assert [line for line in loaded.text.splitlines() if line] == [
            "제4조(휴가) 휴가 일수는 다음과 같다.",
            "구분 | 일수",
            "연차휴가 | 15일",
            "제5조(신청) 휴가는 미리",
            "신청한다.",
        ]

    def test_renders_automatic_paragraph_numbers(self, tmp_path):
        body = "".join([
            hwpx_paragraph("(목적) 이 규칙은 근무 조건을 정한다.", para_pr="5"),
            hwpx_paragraph("(휴가) 연차휴가는 다음과 같다.", para_pr="5"),
            hwpx_paragraph("입사 첫해에는 11일을 준다.", para_pr="6"),
            hwpx_paragraph("", para_pr="6"),
            hwpx_paragraph("그 다음 해부터는 15일을 준다.", para_pr="6"),
            hwpx_paragraph("(병가) 병가는 연 60일 이내로 한다.", para_pr="5"),
            hwpx_paragraph("진단서를 내야 한다.", para_pr="6"),
        ])
        hwpx = make_hwpx({0: hwpx_section(body)}, header=NUMBERING_HEADER)
        loaded = HwpxLoader().load(write(tmp_path, "numbered.hwpx", hwpx))

        assert loaded.text.splitlines() == [
            "제1조 (목적) 이 규칙은 근무 조건을 정한다.",
            "제2조 (휴가) 연차휴가는 다음과 같다.",
            "① 입사 첫해에는 11일을 준다.",
            "",
            "③ 그 다음 해부터는 15일을 준다.",
            "제3조 (병가) 병가는 연 60일 이내로 한다.",
            "① 진단서를 내야 한다.",
        ]

    def test_unreadable_section_is_a_warning_when_others_are_read(self, tmp_path):
        sections = {0: hwpx_section(hwpx_paragraph("제1조(목적) 읽히는 구역")), 1: "<hs:sec><broken"}
        loaded = HwpxLoader().load(write(tmp_path, "partial.hwpx", make_hwpx(sections)))

        assert loaded.text == "제1조(목적) 읽히는 구역"
        assert len(loaded.warnings) == 1
        assert loaded.warnings[0].startswith("Contents/section1.xml could not be read")

    def test_password_protected_hwpx_is_refused_with_a_reason(self, tmp_path):
        manifest = b'<manifest><file-entry full-path="Contents/section0.xml"><encryption-data/></file-entry></manifest>'
        hwpx = make_hwpx({0: "encrypted bytes"}, extra={"META-INF/manifest.xml": manifest})
        with pytest.raises(IngestError, match=r"^locked\.hwpx: password-protected HWPX"):
            HwpxLoader().load(write(tmp_path, "locked.hwpx", hwpx))

    def test_zip_without_sections_is_not_an_hwpx_document(self, tmp_path):
        hwpx = make_hwpx({}, extra={"readme.txt": b"hello"})
        with pytest.raises(IngestError, match=r"^other\.hwpx: not an HWPX document \(no Contents/section\*\.xml"):
            HwpxLoader().load(write(tmp_path, "other.hwpx", hwpx))

    def test_damaged_zip_is_reported(self, tmp_path):
        hwpx = make_hwpx({0: hwpx_section(hwpx_paragraph("제1조(목적) 본문"))})
        with pytest.raises(IngestError, match=r"^cut\.hwpx: damaged HWPX file"):
            HwpxLoader().load(write(tmp_path, "cut.hwpx", hwpx[:-40]))

    def test_document_without_text_is_reported(self, tmp_path):
        hwpx = make_hwpx({0: hwpx_section(HEADER_AND_FOOTER)})
        with pytest.raises(IngestError, match=r"^blank\.hwpx: the HWPX document contains no text$"):
            HwpxLoader().load(write(tmp_path, "blank.hwpx", hwpx))
