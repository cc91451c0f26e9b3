"""An English-speaking colleague asks regbot in Slack: the real server (offline, sample regulations) answers in
English, quoting the Korean article as written, and declines an out-of-scope question in English."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from rag.lang import framing_for
from tests.e2e.fakes.slack_api import BOT_USER_ID, FakeSlackApi
from tests.e2e.slack.conftest import BOT_TOKEN, CHANNEL, SIGNING_SECRET, SlackSender

ENGLISH = framing_for("en")


@pytest.fixture
async def slack_regbot(start_regbot, slack_api: FakeSlackApi) -> AsyncIterator[SlackSender]:
    server = await start_regbot(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
                                SLACK_API_URL=slack_api.api_url)
    async with aiohttp.ClientSession() as session:
        yield SlackSender(server.url, session, slack_api)


async def test_english_question_is_answered_in_english_with_the_korean_article_quoted(
        slack_regbot: SlackSender, slack_api: FakeSlackApi):
    event = slack_regbot.mention(f"<@{BOT_USER_ID}> After one full year here, how much paid annual leave is mine?")

    status, _ = await slack_regbot.event(event)

    assert status == 200
    final = await slack_api.wait_for(lambda: slack_api.answered(CHANNEL, event["ts"]))
    first_line = final.answer_text.splitlines()[0]
    assert first_line.startswith("Here is what the Korean regulations say about annual paid leave.")
    # The article itself, in its own Korean words, with its reference.
    assert "Under 취업규칙 제20조 제1항: 「1년간 80퍼센트 이상 출근한 직원에게는 15일의 연차유급휴가를 준다.」" \
        in final.answer_text
    assert ENGLISH.EXTRACTIVE_SUPPORT in final.answer_text
    assert "취업규칙 제20조" in final.context_text
    # The buttons and captions under the answer are English too; a follow-up names its article with no Korean
    # sentence around it.
    assert final.context_text.startswith("*Sources*")
    feedback = [b["text"]["text"] for b in final.buttons("regbot_feedback")]
    assert feedback == ["👍 Helpful", "👎 Not helpful"]
    assert all(not b["text"]["text"].endswith("에 대해 알려줘") for b in final.buttons("regbot_followups"))


async def test_out_of_scope_english_question_is_declined_in_english(
        slack_regbot: SlackSender, slack_api: FakeSlackApi):
    event = slack_regbot.mention(f"<@{BOT_USER_ID}> What will the weather be like this weekend?")

    await slack_regbot.event(event)

    final = await slack_api.wait_for(lambda: slack_api.answered(CHANNEL, event["ts"]))
    assert final.answer_text.startswith("I cannot help with that")


async def test_a_tapped_follow_up_under_an_english_answer_is_answered_in_english(
        slack_regbot: SlackSender, slack_api: FakeSlackApi):
    event = slack_regbot.mention(f"<@{BOT_USER_ID}> After one full year here, how much paid annual leave is mine?")
    await slack_regbot.event(event)
    first = await slack_api.wait_for(lambda: slack_api.answered(CHANNEL, event["ts"]))
    button = first.buttons("regbot_followups")[0]

    status, _ = await slack_regbot.click(button, message=first.as_slack())

    assert status == 200
    second = await slack_api.wait_for(lambda: (a := slack_api.answered(CHANNEL, event["ts"])) is not first and a)
    # The button is a bare Korean reference; the conversation is English, so the article's captions are too.
    assert button["value"] == "취업규칙 제21조(연차휴가의 사용 촉진)"
    assert second.answer_text.startswith("**취업규칙 제21조(연차휴가의 사용 촉진)**")
    assert second.context_text.startswith("*Sources*")
    assert [b["text"]["text"] for b in second.buttons("regbot_feedback")] == ["👍 Helpful", "👎 Not helpful"]
