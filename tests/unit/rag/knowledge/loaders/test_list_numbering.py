"""Automatic list numbers rendered as text."""

from __future__ import annotations

import re

import pytest

from rag.knowledge.loaders.numbering import ListCounters, ListLevel, format_number


@pytest.mark.parametrize(("value", "style", "text"), [
    (3, "decimal", "3"),
    (3, "circled", "③"),
    (21, "circled", "21"),
    (3, "hangul_syllable", "다"),
    (15, "hangul_syllable", "가가"),
    (3, "hangul_jamo", "ㄷ"),
    (3, "circled_hangul", "㉰"),
    (4, "upper_roman", "IV"),
    (9, "lower_roman", "ix"),
    (2, "lower_letter", "b"),
    (12, "sino_korean", "일이"),
    (7, "decimal_zero", "07"),
    (7, "none", ""),
])
def test_format_number(value, style, text):
    assert format_number(value, style) == text


def test_counters_restart_deeper_levels_and_render_parent_numbers():
    levels = {
        0: ListLevel("제%1조", "decimal"),
        1: ListLevel("%1.%2", "decimal"),
        2: ListLevel("%3.", "hangul_syllable"),
    }
    counters = ListCounters(re.compile(r"%([1-9])"))
    labels = [counters.next_label("a", level, levels) for level in (0, 1, 1, 2, 2, 0, 1, 2)]
    assert labels == ["제1조", "1.1", "1.2", "가.", "나.", "제2조", "2.1", "가."]


def test_restart_sets_the_next_value():
    levels = {0: ListLevel("%1.", "decimal", start=1)}
    counters = ListCounters(re.compile(r"%([1-9])"))
    counters.next_label("a", 0, levels)
    counters.restart("a", 0, 5)
    assert counters.next_label("a", 0, levels) == "5."
