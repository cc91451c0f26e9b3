"""Shared line clean-up: tidy lines, table rows, metadata titles."""

from __future__ import annotations

import pytest

from rag.knowledge.loaders.textlines import clean_metadata_title, table_lines, tidy_lines, title_in_text


class TestTidyLines:
    def test_normalises_to_nfc_and_drops_controls_and_private_use_glyphs(self):
        decomposed = "\u1100\u1161\u11a8"  # 각 as conjoining jamo (macOS)
        assert tidy_lines([f"{decomposed}\x07 \uf53a글\u3000 문서  "]) == ["각 글 문서"]

    def test_blank_runs_collapse_and_ends_are_trimmed(self):
        assert tidy_lines(["", "제1조", "", "", "제2조\n\n제3조", ""]) == ["제1조", "", "제2조", "", "제3조"]


class TestTableLines:
    def test_data_table_gives_one_line_per_row(self):
        rows = [[["구분"], ["일수"]], [["연차휴가"], ["15일"]]]
        assert table_lines(rows) == ["구분 | 일수", "연차휴가 | 15일"]

    def test_merged_cells_repeating_their_text_appear_once(self):
        assert table_lines([[["휴가"], ["휴가"], ["15일"]]]) == ["휴가 | 15일"]

    def test_layout_table_keeps_paragraphs_as_lines(self):
        rows = [[["제1조(목적) 본문", "① 첫째 항"], ["비고"]]]
        assert table_lines(rows) == ["제1조(목적) 본문", "① 첫째 항", "비고"]

    def test_empty_cells_and_rows_are_dropped(self):
        assert table_lines([[["가"], [""], ["나"]], [[""], []]]) == ["가 | 나"]


class TestMetadataTitles:
    @pytest.mark.parametrize(("raw", "title"), [
        ("Microsoft Word - 한빛 취업규칙.docx", "한빛 취업규칙"),
        ("한빛 취업규칙\x00\x00\x1f\x00garbage", "한빛 취업규칙"),
        ("Untitled", ""),
        ("제목 없음", ""),
        ("문서1", ""),
        ("가" * 101, ""),
        (None, ""),
        ("Café Règlement", "Café Règlement"),  # real Latin-1 text is left alone
        ("Ãë¾÷±ÔÄ¢", "취업규칙"),  # CP949 bytes shown as Latin-1
    ])
    def test_clean_metadata_title(self, raw, title):
        assert clean_metadata_title(raw) == title

    def test_title_shown_in_the_first_lines_is_kept(self):
        assert title_in_text("한빛 취업규칙", ["", "한빛  취업 규칙", "제1조(목적) …"]) == "한빛 취업규칙"

    @pytest.mark.parametrize("title", ["본문내용본문내용", "3", "취업"])
    def test_stale_or_partial_titles_are_dropped(self, title):
        assert title_in_text(title, ["한빛 취업규칙", "제1조(목적) 이 규칙은 근무 조건을 정한다."]) == ""
