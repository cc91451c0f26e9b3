"""Shared text normalisation: markup remnants."""

from rag.text import strip_markup


def test_tags_and_entities_go_and_lines_that_held_only_markup_are_dropped():
    text = "① 다음과 같다.\n\t<img src=\"x\" alt=\"y\" >\n│표│\n</img>\nA &amp; B &#39;인용&#39;"
    assert strip_markup(text) == "① 다음과 같다.\n│표│\nA & B '인용'"


def test_korean_angle_bracket_notes_are_content():
    assert strip_markup("휴가를 준다. <개정 2020. 1. 1.>") == "휴가를 준다. <개정 2020. 1. 1.>"


def test_an_escaped_tag_stays_text_and_blank_lines_stay():
    assert strip_markup("&lt;b&gt;굵게&lt;/b&gt;\n\n끝") == "<b>굵게</b>\n\n끝"


def test_text_without_markup_is_returned_unchanged():
    text = "① 사용자는 15일의 유급휴가를 주어야 한다."
    assert strip_markup(text) is text
