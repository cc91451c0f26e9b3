"""The playground on the real server over the sample regulations, over plain HTTP (no browser)."""

from __future__ import annotations

import aiohttp

from bot.report.recorder import ANSWER_KEEP_CHARS
from bot.service.limits import LimitsConfig
from rag import messages
from tests.e2e.recorded import recorded_votes
from tests.unit.adapters.web.fakes import parse_sse

QUESTION = "입사 1년 지나면 연차 며칠 받아?"


def browser() -> aiohttp.ClientSession:
    """A client that keeps the session cookie, as a browser does (aiohttp's default jar drops cookies of IPs)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
CONVERSATION = "e2etab0123456789"
USER = "e2ebrowser012345"


async def ask(http: aiohttp.ClientSession, url: str, question: str = QUESTION, *, conversation: str = CONVERSATION,
              user: str = USER) -> tuple[str, list[tuple[str, dict]]]:
    body = {"question": question, "conversation_id": conversation, "user_id": user}
    async with http.post(url + "/api/playground/ask", json=body) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/event-stream; charset=utf-8"
        return response.headers["X-Regbot-Turn"], parse_sse(await response.text())


class TestPlaygroundOff:
    async def test_page_and_api_are_absent_by_default(self, start_regbot):
        server = await start_regbot()
        async with browser() as http:
            async with http.get(server.url + "/") as page:  # a list of the routes that are on, not the page
                assert page.status == 200 and page.content_type == "application/json"
                assert not [r for r in (await page.json())["routes"] if "playground" in r]
            body = {"question": QUESTION, "conversation_id": CONVERSATION, "user_id": USER}
            async with http.post(server.url + "/api/playground/ask", json=body) as answer:
                assert answer.status == 404
            async with http.get(server.url + "/api/playground/article", params={"doc": "취업규칙"}) as article:
                assert article.status == 404


class TestPlaygroundOn:
    async def test_answer_streams_status_text_and_the_cited_article(self, start_regbot):
        server = await start_regbot(REGBOT_PLAYGROUND="true")
        async with browser() as http:
            async with http.get(server.url + "/") as page:
                assert page.status == 200
                assert "regbot 규정 도우미" in await page.text()
            _, frames = await ask(http, server.url)

        kinds = [name for name, _ in frames]
        assert kinds[0] == "status"
        assert kinds[-1] == "done"
        assert "delta" in kinds and "sources" in kinds
        statuses = [data["text"] for name, data in frames if name == "status"]
        assert messages.STATUS_SEARCHING in statuses
        streamed = "".join(data["text"] for name, data in frames if name == "delta")
        assert "15일" in streamed
        answer = frames[-1][1]["answer"]
        assert answer["route"] == "search"
        assert ("취업규칙", "제20조") in {(c["doc"], c["article"]) for c in answer["citations"]}

    async def test_follow_up_in_the_same_tab_continues_the_stored_thread(self, start_regbot):
        server = await start_regbot(REGBOT_PLAYGROUND="true")
        async with browser() as http:
            _, first = await ask(http, server.url)
            followup = first[-1][1]["answer"]["followups"][0]
            _, second = await ask(http, server.url, followup)
            async with http.get(server.url + "/api/playground/history",
                                params={"conversation_id": CONVERSATION}) as response:
                shown = await response.json()

        assert second[-1][0] == "done"
        stored = await server.runtime.service.history(f"web:{CONVERSATION}")
        assert [m.content for m in stored if m.role == "user"] == [QUESTION, followup]
        assert [m["content"] for m in shown["messages"]] == [m.content for m in stored]

    async def test_a_tapped_reference_under_an_english_answer_is_answered_as_english(self, start_regbot):
        server = await start_regbot(REGBOT_PLAYGROUND="true")
        async with browser() as http:
            _, first = await ask(http, server.url, "After one full year here, how much paid annual leave is mine?")
            reference = first[-1][1]["answer"]["followups"][0]
            body = {"question": reference, "conversation_id": CONVERSATION, "user_id": USER}
            async with http.post(server.url + "/api/playground/ask", json=body) as response:
                header = response.headers["X-Regbot-Language"]
                second = parse_sse(await response.text())

        assert first[-1][1]["answer"]["language"] == "en"
        assert reference == "취업규칙 제21조(연차휴가의 사용 촉진)"
        # The tapped text reads Korean; the answer carries the conversation's English, and the page takes it.
        assert header == "ko"
        assert second[-1][0] == "done" and second[-1][1]["answer"]["language"] == "en"

    async def test_article_endpoint_returns_the_sample_article(self, start_regbot):
        server = await start_regbot(REGBOT_PLAYGROUND="true")
        async with browser() as http:
            async with http.get(server.url + "/api/playground/article",
                                params={"doc": "취업규칙", "article": "제20조"}) as response:
                article = await response.json()
            async with http.get(server.url + "/api/playground/article",
                                params={"doc": "취업규칙", "article": "제999조"}) as missing:
                assert missing.status == 404

        assert response.status == 200
        assert (article["doc"], article["article"], article["title"]) == ("취업규칙", "제20조", "연차유급휴가")
        assert article["chapter"].startswith("제4장")
        assert article["lines"][0].startswith("①")
        assert any("15일" in line for line in article["lines"])

    async def test_a_vote_keeps_what_was_asked_when_the_operator_keeps_questions(self, start_regbot):
        server = await start_regbot(REGBOT_PLAYGROUND="true", REGBOT_KEEP_QUESTIONS="true")
        async with browser() as http:
            turn_id, frames = await ask(http, server.url)
            vote = {"conversation_id": CONVERSATION, "user_id": USER, "turn_id": turn_id, "rating": "down"}
            async with http.post(server.url + "/api/playground/feedback", json=vote) as response:
                assert response.status == 200

        turns, [vote] = await recorded_votes(server)
        assert (vote.rating, vote.turn_id) == ("down", turn_id)
        assert turns[turn_id].question == QUESTION
        assert turns[turn_id].answer == frames[-1][1]["answer"]["text"][:ANSWER_KEEP_CHARS]

    async def test_thumbs_up_is_stored_like_slack_feedback(self, start_regbot):
        server = await start_regbot(REGBOT_PLAYGROUND="true")
        async with browser() as http:
            turn_id, _ = await ask(http, server.url)
            vote = {"conversation_id": CONVERSATION, "user_id": USER, "turn_id": turn_id, "rating": "up"}
            async with http.post(server.url + "/api/playground/feedback", json=vote) as response:
                assert response.status == 200
                assert (await response.json())["message"] == messages.FEEDBACK_THANKS
            async with http.get(server.url + "/metrics") as metrics:
                exposition = await metrics.text()

        turns, [vote] = await recorded_votes(server)
        assert (vote.platform, vote.rating, vote.turn_id) == ("web", "up", turn_id)
        assert len(vote.user) == 16 and vote.user == turns[turn_id].user  # the records' salted HMAC
        assert vote.conversation == turns[turn_id].conversation and CONVERSATION not in vote.conversation
        assert (turns[turn_id].question, turns[turn_id].answer) == ("", "")  # REGBOT_KEEP_QUESTIONS is off
        assert any(c.article == "제20조" for c in turns[turn_id].citations)
        assert 'regbot_feedback_total{platform="web",rating="up"} 1.0' in exposition

    async def test_rate_limit_applies_per_browser(self, start_regbot):
        limits = LimitsConfig(user_burst=1, user_refill_per_min=0.5, workspace_burst=1000)
        server = await start_regbot(limits=limits, REGBOT_PLAYGROUND="true")
        async with browser() as http, browser() as other:
            _, first = await ask(http, server.url)
            _, second = await ask(http, server.url, "경조휴가는 며칠이야?", user="freshid0123456789")  # ignored
            _, other_browser = await ask(other, server.url, "경조휴가는 며칠이야?", conversation="othertab0123456")

        assert first[-1][0] == "done"
        assert second == [("error", second[0][1])]
        assert second[0][1]["text"].startswith(messages.RATE_LIMITED.split("{")[0])
        assert other_browser[-1][0] == "done"
