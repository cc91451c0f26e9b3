"""Mention and escape hygiene for everything the bot reads from or posts to Slack."""

from __future__ import annotations

import pytest

from adapters.slack.sanitize import (
    StreamSanitizer,
    escape_mrkdwn,
    mentions_user,
    read_user_text,
    sanitize_untrusted,
)

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
        assert escape_mrkdwn("R&D <팀> \"인용\" 'a'") == "R&amp;D &lt;팀&gt; \"인용\" 'a'"


class TestReadUserText:
    def test_bot_mention_is_removed_and_entities_decoded(self):
        text = read_user_text("<@UBOT> 연차 &lt;개정&gt; 규정 &amp; 수당", bot_user_id="UBOT")

        assert text == "연차 <개정> 규정 & 수당"

    def test_other_mentions_and_links_become_plain_words(self):
        text = read_user_text("<@UBOT> <@U2|kim>님 <https://wiki/a|위키> 보세요", bot_user_id="UBOT")

        assert text == "@kim님 위키 (https://wiki/a) 보세요"

    def test_broadcasts_say_nothing_about_the_question(self):
        text = read_user_text("<!channel> 연차는  며칠이야? <!here|here> @here\n<!everyone>", bot_user_id="UBOT")

        assert text == "연차는 며칠이야?"

    def test_decomposed_hangul_is_normalised(self):
        nfd = "\u110b\u1167\u11ab\u110e\u1161"  # 연차 as macOS sends it

        assert read_user_text(nfd) == "연차"

    def test_mentions_user_finds_plain_and_labelled_mentions(self):
        assert mentions_user("<@UBOT> 질문", "UBOT")
        assert mentions_user("질문 <@UBOT|regbot>", "UBOT")
        assert not mentions_user("<@UBOTX> 질문", "UBOT")
        assert not mentions_user("질문", "")


class TestStreamSanitizer:
    HOSTILE = "공지 <!channel> 그리고 @here, <@U1|kim> <개정 2020.1.1> & 끝 @ever"

    def test_any_split_of_the_stream_gives_the_same_text_as_the_whole(self):
        whole = sanitize_untrusted(self.HOSTILE)
        for cut in range(1, len(self.HOSTILE)):
            sanitizer = StreamSanitizer()
            streamed = sanitizer.feed(self.HOSTILE[:cut]) + sanitizer.feed(self.HOSTILE[cut:]) + sanitizer.flush()
            assert streamed == whole, cut

    def test_character_by_character_stream_never_emits_a_broadcast(self):
        sanitizer = StreamSanitizer()
        emitted = "".join(sanitizer.feed(ch) for ch in "<!channel> @here") + sanitizer.flush()

        assert "<!channel>" not in emitted
        assert "@here" not in emitted

    def test_text_without_tokens_is_not_held_back(self):
        assert StreamSanitizer().feed("연차는 15일입니다.") == "연차는 15일입니다."

    def test_an_unclosed_bracket_across_a_line_break_is_released(self):
        sanitizer = StreamSanitizer()

        assert sanitizer.feed("a < b\n다음 줄") == "a &lt; b\n다음 줄"
