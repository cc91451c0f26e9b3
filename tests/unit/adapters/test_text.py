"""The one set of rules for untrusted text on every surface: tokens, script links, broadcasts, markup."""

from __future__ import annotations

import pytest

from adapters.text import StreamSanitizer, escape_markup, neutralize_untrusted, sanitize_untrusted

WORD_JOINER = "\u2060"


class TestSanitizeUntrusted:
    @pytest.mark.parametrize(
        ("token", "shown"),
        [
            ("<!channel>", f"@{WORD_JOINER}channel"),
            ("<!here>", f"@{WORD_JOINER}here"),
            ("<!here|here>", f"@{WORD_JOINER}here"),
            ("<!everyone>", f"@{WORD_JOINER}everyone"),
            ("<!subteam^S0HR|@hr-team>", "@hr-team"),
            ("<@U0VICTIM>", "@U0VICTIM"),
            ("<@U0VICTIM|kim>", "@kim"),
            ("<#C0GENERAL|general>", "#general"),
        ],
    )
    def test_special_tokens_become_words_that_ping_nobody(self, token: str, shown: str):
        safe = sanitize_untrusted(f"공지 {token} 확인")

        assert safe == f"공지 {shown} 확인"
        assert "<" not in safe

    def test_bare_broadcast_words_are_broken_with_a_word_joiner(self):
        assert sanitize_untrusted("@here @Channel @everyone") == (
            f"@{WORD_JOINER}here @{WORD_JOINER}Channel @{WORD_JOINER}everyone"
        )

    def test_disguised_link_shows_its_real_address(self):
        assert sanitize_untrusted("<https://evil.example/login|취업규칙 원문>") == (
            "취업규칙 원문 (https://evil.example/login)"
        )

    def test_regulation_revision_marks_stay_readable_text(self):
        assert sanitize_untrusted("① 연차는 15일로 한다. <개정 2020. 1. 1.>") == (
            "① 연차는 15일로 한다. &lt;개정 2020. 1. 1.&gt;"
        )

    def test_only_ampersand_and_angle_brackets_are_escaped(self):
        assert escape_markup("R&D <팀> \"인용\" 'a'") == "R&amp;D &lt;팀&gt; \"인용\" 'a'"



class TestLinksAndMarkup:
    @pytest.mark.parametrize("scheme", ["javascript:alert(1)", "JavaScript:void(0)", "data:text/html;base64,PHA+",
                                        "vbscript:msgbox", "file:///etc/passwd"])
    def test_markdown_link_to_a_script_or_local_scheme_becomes_text(self, scheme: str):
        assert neutralize_untrusted(f"[원문]({scheme}) 참고") == f"원문 ({scheme}) 참고"

    @pytest.mark.parametrize("link", ["[원문](https://law.go.kr/a)", "[메일](mailto:hr@example.com)", "[1]",
                                      "[별표 2]"])
    def test_web_links_and_brackets_stay(self, link: str):
        assert neutralize_untrusted(f"{link} 참고") == f"{link} 참고"

    @pytest.mark.parametrize("html", ['<img src=x onerror="alert(1)">', '<a href="javascript:alert(1)">x</a>',
                                      "<script>alert(1)</script>", "<at>홍길동</at>"])
    def test_html_is_escaped_for_markup_surfaces_and_left_as_text_otherwise(self, html: str):
        assert "<" not in sanitize_untrusted(html) and ">" not in sanitize_untrusted(html)
        assert neutralize_untrusted(html) == html  # the playground shows it with textContent


class TestStreamSanitizer:
    HOSTILE = "공지 <!channel> 그리고 @here, <@U1|kim> [원문](javascript:x) [1] <개정 2020.1.1> & 끝 @ever"

    @pytest.mark.parametrize("render", [sanitize_untrusted, neutralize_untrusted])
    def test_any_split_of_the_stream_gives_the_same_text_as_the_whole(self, render):
        whole = render(self.HOSTILE)
        for cut in range(1, len(self.HOSTILE)):
            sanitizer = StreamSanitizer(render)
            streamed = sanitizer.feed(self.HOSTILE[:cut]) + sanitizer.feed(self.HOSTILE[cut:]) + sanitizer.flush()
            assert streamed == whole, cut

    def test_character_by_character_stream_never_emits_a_broadcast(self):
        sanitizer = StreamSanitizer()
        emitted = "".join(sanitizer.feed(ch) for ch in "<!channel> @here") + sanitizer.flush()

        assert "<!channel>" not in emitted
        assert "@here" not in emitted

    def test_text_without_tokens_is_not_held_back(self):
        assert StreamSanitizer().feed("연차는 15일입니다[1].") == "연차는 15일입니다[1]."

    def test_a_markdown_link_being_written_is_held_back(self):
        sanitizer = StreamSanitizer()

        assert sanitizer.feed("원문은 [여기](javascr") == "원문은 "
        assert sanitizer.feed("ipt:alert(1)) 참고") == "여기 (javascript:alert(1)) 참고"

    def test_an_unclosed_bracket_across_a_line_break_is_released(self):
        sanitizer = StreamSanitizer()

        assert sanitizer.feed("a < b\n다음 줄") == "a &lt; b\n다음 줄"


class TestLinksTheFirstPatternMissed:
    """Issue 28: a title, deeper parentheses and reference-style links no longer carry a script link."""

    @pytest.mark.parametrize("text", [
        '[x](javascript:alert(1) "t")',
        "[x](javascript:a((b)))",
        "[x]( <data:text/html,hi> 'title')",
    ])
    def test_inline_links_to_unsafe_schemes_are_broken(self, text: str) -> None:
        shown = neutralize_untrusted(text)

        assert "](" not in shown
        assert "x" in shown

    def test_reference_definitions_to_unsafe_schemes_are_broken(self) -> None:
        shown = neutralize_untrusted("[누르세요][1]\n\n[1]: javascript:alert(1)\n  [2]: <vbscript:x>")

        assert "[1]:" not in shown and "[2]:" not in shown
        assert "누르세요" in shown

    @pytest.mark.parametrize("text", ["[규정](https://example.com/a_(b))", "[메일](mailto:hr@example.com)",
                                      "[1]: https://example.com/rules"])
    def test_safe_links_are_kept(self, text: str) -> None:
        assert neutralize_untrusted(text) == text
