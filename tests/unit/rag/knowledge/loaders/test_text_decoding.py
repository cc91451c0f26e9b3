"""Text is judged by whether it decodes: extracted pages with `�`, picture markers and tables are text; random
bytes are not; a file cut inside its last character is kept, with a warning in the ingest report."""

from __future__ import annotations

import random
import re

import pytest

from rag.errors import IngestError
from rag.knowledge.loaders import LoaderRegistry
from rag.knowledge.loaders.decoding import decode_text, looks_like_text
from tests.unit.rag.knowledge.loaders.document_factories import SAMPLE_LINES, write

# Pages as OCR or PDF-to-Markdown tools leave them (our own wording): replacement characters where a glyph had
# no Unicode mapping, picture markers, Markdown tables, form-feed page breaks.
EXTRACTED_PAGES = {
    "ocr_replacement_chars.txt": (
        "제5조(출장비) ① 출장비는 �� 기준에 따라 지급한다.\n"
        "② 숙박비는 1박 �0,000원 이내로 한다. � � �\n"
        "③ ���� 영수증을 첨부하여 7일 이내에 신청한다.\n" * 3
    ),
    "picture_markers.md": (
        "# 복무 지침\n\n<!-- image -->\n\n제1조(목적) 이 지침은 복무 기준을 정한다.\n\n"
        "![그림 1](page1_img1.png)\n\n<!-- image -->\n\n제2조(근무) 근무는 오전 9시에 시작한다.\n"
    ),
    "markdown_table.md": (
        "제7조(휴가 일수)\n\n| 근속 | 휴가 |\n|---|---|\n| 1년 | 15일 |\n| 3년 | 16일 |\n\n"
        "※ 표의 일수는 ｢근로기준법｣ 제60조에 따른다. ■ □ ◆ ▶ ㉮ ㉯ ⅰ ⅱ\n\f"
        "제8조(병가) 병가는 연 60일 이내로 한다.\n"
    ),
    "cp949_legacy.txt": "\n".join(SAMPLE_LINES),
}


def generated_bytes(seed: int, size: int = 6000) -> bytes:
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(size))


BINARY_FILES = {
    "random_bytes.txt": generated_bytes(1),
    "random_bytes_no_nul.md": bytes(b or 1 for b in generated_bytes(2)),
    "random_high_bytes.txt": bytes(0x80 | b for b in generated_bytes(3)),  # every byte > 0x7F, like Hangul
    "control_codes.txt": bytes(range(1, 32)) * 200,
}


def _encode(name: str, text: str) -> bytes:
    return text.encode("cp949" if "cp949" in name else "utf-8")


class TestExtractedPagesAreText:
    @pytest.mark.parametrize("name", sorted(EXTRACTED_PAGES))
    def test_extracted_page_is_indexed_as_text(self, tmp_path, name):
        text = EXTRACTED_PAGES[name]
        loaded = LoaderRegistry().load(write(tmp_path, name, _encode(name, text)))
        assert loaded.text.strip().splitlines()[-1] == text.strip().splitlines()[-1]
        assert loaded.warnings == ()

    def test_a_page_of_mostly_replacement_characters_is_still_text(self, tmp_path):
        text = "제1조 " + "�" * 400 + "\n제2조(시행) 이 규정은 공포한 날부터 시행한다.\n"
        loaded = LoaderRegistry().load(write(tmp_path, "page_0012.txt", text.encode()))
        assert "공포한 날부터 시행한다" in loaded.text


class TestBinaryIsNotText:
    @pytest.mark.parametrize("name", sorted(BINARY_FILES))
    def test_generated_bytes_are_refused_with_the_file_name(self, tmp_path, name):
        with pytest.raises(IngestError, match="^" + re.escape(name) + ": "):
            LoaderRegistry().load(write(tmp_path, name, BINARY_FILES[name]))

    @pytest.mark.parametrize("name", sorted(BINARY_FILES))
    def test_generated_bytes_do_not_look_like_text(self, name):
        assert not looks_like_text(BINARY_FILES[name])


class TestCutLastCharacter:
    def test_a_file_cut_inside_its_last_character_is_kept_and_the_report_says_so(self, tmp_path):
        raw = "\n".join(SAMPLE_LINES).encode("utf-8")[:-2]  # the final "." and the last byte of 다
        loaded = LoaderRegistry().load(write(tmp_path, "cut.txt", raw))
        assert loaded.text.rstrip().endswith("시행한")
        assert loaded.warnings == ("the last character was cut off (2 bytes dropped)",)

    def test_a_complete_file_has_no_warning(self):
        assert decode_text("취업규칙".encode(), "ok.txt").warnings == ()

    def test_a_few_damaged_bytes_inside_a_long_utf8_file_are_replaced_and_reported(self):
        raw = ("제1조 근무시간은 하루 8시간으로 한다.\n" * 200).encode()
        damaged = raw[:3000] + b"\xff" + raw[3000:]
        decoded = decode_text(damaged, "disk.txt")
        assert decoded.encoding == "utf-8"
        assert decoded.warnings == ("1 undecodable byte sequence(s) replaced by �",)
