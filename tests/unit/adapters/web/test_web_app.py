"""The playground adapter over HTTP: page, SSE answers, feedback, article and history endpoints (fake service)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from adapters.web import WebPlaygroundAdapter
from adapters.web import labels as web_labels
from rag import messages
from rag.models import Chunk, Message, Role, Scope
from tests.fakes.turn_service import FakeTurnService, Script
from tests.unit.adapters.web.fakes import (
    LEAVE_ANSWER,
    LEAVE_CITATION,
    PLAYGROUND_SCOPE,
    endless_status,
    leave_answer_events,
    make_chunk,
    parse_sse,
)

CONVERSATION = "tab0123456789abcdef"
USER = "browser0123456789"
QUESTION = "입사 1년 지나면 연차 며칠 받아?"


@dataclass
class ArticleIndex:
    """A fake structural lookup: the references it was asked for, and its one article."""

    asked: list[tuple[str, Scope]] = field(default_factory=list)

    def __call__(self, reference: str, scope: Scope) -> tuple[Chunk, ...]:
        self.asked.append((reference, scope))
        if reference == "취업규칙 제20조":
            return (make_chunk(text="① 1년 동안 8할 넘게 출근한 직원은 15일의 유급 연차휴가를 받는다."),)
        return ()


@dataclass
class Playground:
    url: str
    session: aiohttp.ClientSession
    service: FakeTurnService
    articles: ArticleIndex

    async def ask(self, question: str = QUESTION, **fields: str) -> tuple[aiohttp.ClientResponse, str]:
        body = {"question": question, "conversation_id": CONVERSATION, "user_id": USER, **fields}
        async with self.session.post(self.url + "/api/playground/ask", json=body) as response:
            return response, await response.text()


async def start_playground(service: FakeTurnService, *, with_articles: bool = True) -> tuple[TestServer, ArticleIndex]:
    articles = ArticleIndex()
    adapter = WebPlaygroundAdapter(service, lookup_article=articles if with_articles else None)
    app = web.Application()
    adapter.attach(app)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server, articles


def playground_service(script: Script = leave_answer_events) -> FakeTurnService:
    return FakeTurnService(script, scope=PLAYGROUND_SCOPE)


@pytest.fixture
def service() -> FakeTurnService:
    return playground_service()


@pytest.fixture
async def playground(service: FakeTurnService) -> AsyncIterator[Playground]:
    server, articles = await start_playground(service)
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        yield Playground(str(server.make_url("")).rstrip("/"), session, service, articles)
    await server.close()


class TestPage:
    async def test_page_is_korean_with_labels_examples_and_config(self, playground):
        async with playground.session.get(playground.url + "/") as response:
            html = await response.text()

        assert response.status == 200
        assert response.content_type == "text/html"
        assert '<html lang="ko">' in html
        assert f'<label for="question" class="sr-only">{web_labels.QUESTION_LABEL}</label>' in html
        assert f'<button type="button" class="example">{web_labels.EXAMPLE_QUESTIONS[0]}</button>' in html
        config = json.loads(re.search(r'<script id="playground-config" type="application/json">(.*?)</script>',
                                      html, re.S).group(1))
        assert config["labels"]["FEEDBACK_UP"] == web_labels.FEEDBACK_UP
        assert config["messages"]["FEEDBACK_THANKS"] == messages.FEEDBACK_THANKS
        assert config["api"]["ask"] == "/api/playground/ask"
        assert config["articles"] is True

    async def test_page_allows_only_its_own_scripts(self, playground):
        async with playground.session.get(playground.url + "/") as response:
            policy = response.headers["Content-Security-Policy"]

        assert "script-src 'self'" in policy
        assert "frame-ancestors 'none'" in policy

    async def test_script_and_stylesheet_are_served_from_the_package(self, playground):
        async with playground.session.get(playground.url + "/playground/static/playground.js") as script:
            assert script.status == 200
            assert script.content_type == "text/javascript"
            assert "text/event-stream" in await script.text()
        async with playground.session.get(playground.url + "/playground/static/playground.css") as style:
            assert style.status == 200
            assert style.content_type == "text/css"

    async def test_page_without_article_lookup_says_so_to_the_script(self):
        server, _ = await start_playground(playground_service(), with_articles=False)
        try:
            async with aiohttp.ClientSession() as session, session.get(str(server.make_url("/"))) as response:
                html = await response.text()
            assert '"articles": false' in html
        finally:
            await server.close()


class TestAsk:
    async def test_answer_streams_as_one_sse_frame_per_event(self, playground):
        response, body = await playground.ask()

        assert response.status == 200
        assert response.headers["Content-Type"] == "text/event-stream; charset=utf-8"
        frames = parse_sse(body)
        # Deltas may be regrouped (a tail that could still become a link waits for the next one); the rest is 1:1.
        assert [name for name, _ in frames if name != "delta"] == ["status", "sources", "followups", "done"]
        assert "".join(data["text"] for name, data in frames if name == "delta") == LEAVE_ANSWER
        assert next(data for name, data in frames if name == "sources")["citations"][0]["article"] == "제20조"
        assert frames[-1][1]["answer"]["followups"] == ["남은 연차는 어떻게 확인해?", "연차를 반차로 나눠 쓸 수 있어?"]

    async def test_turn_is_keyed_by_the_tab_and_the_browser(self, playground):
        response, _ = await playground.ask("  연차 며칠이야?  ")

        turn = playground.service.turns[0]
        assert turn.conversation_key == f"web:{CONVERSATION}"
        assert turn.user.startswith("session-") and USER not in turn.user  # the server's session, not the body
        assert turn.text == "  연차 며칠이야?  "
        assert turn.scope == PLAYGROUND_SCOPE
        assert playground.service.scope_requests[0].platform == "web"
        assert response.headers["X-Regbot-Turn"] == turn.turn_id

    @pytest.mark.parametrize(("question", "language"), [
        ("연차 며칠이야?", "ko"), ("IT팀 PC 반납은 언제 해?", "ko"),
        ("How many days of annual leave?", "en"), ("Tôi được nghỉ phép năm bao nhiêu ngày?", "vi"),
    ])
    async def test_answer_names_the_questions_language_and_the_page_has_its_labels(self, playground, question,
                                                                                    language):
        from adapters.web import labels as web_labels

        response, _ = await playground.ask(question)

        assert response.headers["X-Regbot-Language"] == language
        feedback_up = {"ko": web_labels.FEEDBACK_UP, "en": "👍 Helpful", "vi": "👍 Hữu ích"}[language]
        assert web_labels.ANSWER_LABELS[language]["FEEDBACK_UP"] == feedback_up

    async def test_question_in_nfd_reaches_the_service_in_nfc(self, playground):
        import unicodedata

        await playground.ask(unicodedata.normalize("NFD", "연차"))

        assert playground.service.turns[0].text == "연차"

    @pytest.mark.parametrize("conversation_id", ["short", "web:other:key", "x" * 65, "탭아이디12345678"])
    async def test_malformed_conversation_ids_are_refused(self, playground, conversation_id):
        response, body = await playground.ask(conversation_id=conversation_id)

        assert response.status == 400
        assert "AskRequest" in json.loads(body)["error"]
        assert playground.service.turns == []

    async def test_body_must_be_json(self, playground):
        async with playground.session.post(playground.url + "/api/playground/ask", data="question=연차") as response:
            assert response.status == 415
        assert playground.service.turns == []

    async def test_other_sites_cannot_ask(self, playground):
        body = {"question": QUESTION, "conversation_id": CONVERSATION, "user_id": USER}
        headers = {"Origin": "https://evil.example.com"}
        async with playground.session.post(playground.url + "/api/playground/ask", json=body,
                                           headers=headers) as response:
            assert response.status == 403
        assert playground.service.turns == []

    async def test_oversized_body_is_refused(self, playground):
        response, _ = await playground.ask("연" * 70_000)

        assert response.status == 413

    async def test_leaving_mid_answer_closes_the_service_stream(self):
        service = playground_service(endless_status)
        server, _ = await start_playground(service)
        try:
            async with aiohttp.ClientSession() as session:
                body = {"question": QUESTION, "conversation_id": CONVERSATION, "user_id": USER}
                async with session.post(str(server.make_url("/api/playground/ask")), json=body) as response:
                    first = await response.content.readuntil(b"\n\n")
                    assert first.startswith(b"event: status")
                # The browser has gone: the answer never ends by itself, so only the adapter can close it.
                await asyncio.wait_for(service.closed.wait(), timeout=10)
        finally:
            await server.close()


class TestFeedback:
    async def _vote(self, playground, turn_id: str, rating: str = "up", conversation_id: str = CONVERSATION):
        body = {"conversation_id": conversation_id, "user_id": USER, "turn_id": turn_id, "rating": rating}
        async with playground.session.post(playground.url + "/api/playground/feedback", json=body) as response:
            return response.status, await response.json()

    async def test_vote_is_recorded_with_question_answer_and_sources(self, playground):
        response, _ = await playground.ask()

        status, body = await self._vote(playground, response.headers["X-Regbot-Turn"])

        assert status == 200
        assert body == {"recorded": True, "message": messages.FEEDBACK_THANKS}
        feedback = playground.service.feedback[0]
        assert (feedback.platform, feedback.rating) == ("web", "up")
        assert feedback.user == playground.service.turns[0].user
        assert feedback.conversation_key == f"web:{CONVERSATION}"
        assert feedback.question == QUESTION
        assert feedback.answer == LEAVE_ANSWER
        assert feedback.citations == (LEAVE_CITATION,)

    async def test_second_vote_on_the_same_answer_is_not_recorded(self, playground):
        response, _ = await playground.ask()
        turn_id = response.headers["X-Regbot-Turn"]

        await self._vote(playground, turn_id, "up")
        status, body = await self._vote(playground, turn_id, "down")

        assert (status, body["recorded"]) == (200, False)
        assert [f.rating for f in playground.service.feedback] == ["up"]

    async def test_vote_from_another_conversation_is_refused(self, playground):
        response, _ = await playground.ask()

        status, _ = await self._vote(playground, response.headers["X-Regbot-Turn"], conversation_id="othertab12345678")

        assert status == 403
        assert playground.service.feedback == []

    async def test_vote_from_another_session_is_refused(self, playground):
        response, _ = await playground.ask()
        playground.session.cookie_jar.clear()  # another browser that learnt the turn and conversation ids

        status, _ = await self._vote(playground, response.headers["X-Regbot-Turn"])

        assert status == 403
        assert playground.service.feedback == []

    async def test_unknown_rating_is_refused(self, playground):
        status, _ = await self._vote(playground, "0" * 32, rating="meh")

        assert status == 400
        assert playground.service.feedback == []


class TestAnswerLanguage:
    """A tapped follow-up under an English answer is a bare Korean reference: its letters read Korean, but the
    understanding keeps the conversation's English and the answer carries it; the page and the thanks follow it."""

    REFERENCE = "취업규칙 제21조(연차휴가의 사용 촉진)"

    @staticmethod
    def english_answer(turn):
        from rag.models import Answer, AnswerEvent, Route

        answer = Answer(text=f"**{turn.text}**", route=Route.LOOKUP, citations=(LEAVE_CITATION,), language="en")
        return [AnswerEvent.delta(answer.text), AnswerEvent.done(answer)]

    async def test_the_done_event_carries_the_answers_language_and_the_thanks_follow_it(self):
        from rag.lang import framing_for

        server, _ = await start_playground(playground_service(self.english_answer))
        try:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
                url = str(server.make_url("")).rstrip("/")
                body = {"question": self.REFERENCE, "conversation_id": CONVERSATION, "user_id": USER}
                async with session.post(url + "/api/playground/ask", json=body) as response:
                    header, turn_id = response.headers["X-Regbot-Language"], response.headers["X-Regbot-Turn"]
                    frames = parse_sse(await response.text())
                vote = {"conversation_id": CONVERSATION, "user_id": USER, "turn_id": turn_id, "rating": "up"}
                async with session.post(url + "/api/playground/feedback", json=vote) as response:
                    thanks = (await response.json())["message"]
        finally:
            await server.close()

        assert header == "ko"  # the letters of the tapped text, before the understanding has read the conversation
        assert frames[-1][1]["answer"]["language"] == "en"
        assert thanks == framing_for("en").FEEDBACK_THANKS != messages.FEEDBACK_THANKS

    def test_the_page_takes_the_answers_language_over_the_header(self):
        from adapters.web.page import static_text

        script = static_text("playground.js")  # run in a browser by tests/e2e/web (needs Chromium)
        done = script[script.index('kind === "done"'):]
        assert "view.labels = labelsFor(answer.language)" in done[:done.index("showSources(view)")]


class TestArticle:
    async def test_cited_article_is_looked_up_within_the_playground_scope(self, playground):
        async with playground.session.get(playground.url + "/api/playground/article",
                                          params={"doc": "취업규칙", "article": "제20조"}) as response:
            body = await response.json()

        assert response.status == 200
        assert body["doc"] == "취업규칙"
        assert body["title"] == "연차휴가"
        assert body["lines"] == ["① 1년 동안 8할 넘게 출근한 직원은 15일의 유급 연차휴가를 받는다."]
        assert playground.articles.asked == [("취업규칙 제20조", PLAYGROUND_SCOPE)]

    async def test_unknown_article_is_404_with_a_korean_message(self, playground):
        async with playground.session.get(playground.url + "/api/playground/article",
                                          params={"doc": "취업규칙", "article": "제99조"}) as response:
            body = await response.json()

        assert response.status == 404
        assert body["error"] == messages.LOOKUP_NOT_FOUND.format(query="취업규칙 제99조")

    async def test_document_is_required(self, playground):
        async with playground.session.get(playground.url + "/api/playground/article",
                                          params={"article": "제20조"}) as response:
            assert response.status == 400


class TestHistory:
    async def test_stored_conversation_is_returned_for_the_tab(self, playground):
        playground.service.histories[f"web:{CONVERSATION}"] = [
            Message(role=Role.USER, content=QUESTION),
            Message(role=Role.ASSISTANT, content="15일이에요."),
        ]

        async with playground.session.get(playground.url + "/api/playground/history",
                                          params={"conversation_id": CONVERSATION}) as response:
            body = await response.json()

        assert body == {"messages": [{"role": "user", "content": QUESTION},
                                     {"role": "assistant", "content": "15일이에요."}]}

    async def test_malformed_conversation_id_is_refused(self, playground):
        async with playground.session.get(playground.url + "/api/playground/history",
                                          params={"conversation_id": "a:b"}) as response:
            assert response.status == 400
