"""Reading what a person wrote in Slack as the plain question it asks."""

from __future__ import annotations

from adapters.slack.sanitize import mentions_user, read_user_text


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
