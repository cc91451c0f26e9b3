"""Access scopes: a channel scoped to one collection never sees another's documents.

Three collections share one index: `company` (the bundled samples), `hr` and `finance` (two small regulations
written for this test). Both new regulations talk about business trips, so a leak would show. A scopes file
maps Slack channels to collections; turns go through BotService with the scope the ScopeResolver gives, and
once through the real server over signed Slack events.
"""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from adapters.base import ScopeRequest
from bot.app import Components, build_components
from bot.server.server import build_runtime, create_app
from bot.service.limits import LimitsConfig
from bot.service.metrics import Metrics
from bot.service.scopes import ScopeResolver
from bot.service.service import BotService
from bot.state import StateStores
from rag.models import Answer, AnswerEventKind, Turn
from testkit import SAMPLES, HashingEmbedder, make_settings, serve_app
from tests.integration.slack_driver import SlackEventSender, TimedSlackApi, event_callback, mention, slack_env

WORKSPACE = "T0REGBOT"  # the fake Slack API's team
HR_CHANNEL = "C0HR"
FINANCE_CHANNEL = "C0FINANCE"
LOBBY_CHANNEL = "C0LOBBY"

HR_REGULATION = """\
    ---
    제목: 인사평가 규정
    시행일자: 2025-03-01
    ---

    # 인사평가 규정

    ##### 제1조 (목적)

    이 규정은 직원의 업무 성과와 역량을 공정하게 평가하는 절차를 정함을 목적으로 한다.

    ##### 제2조 (평가 시기)

    정기 평가는 매년 12월에 실시하고, 수시 평가는 부서 이동이나 승진 심사가 있을 때 실시한다.

    ##### 제3조 (평가 등급)

    평가 등급은 탁월, 우수, 보통, 미흡, 부진의 다섯 단계로 한다.

    ##### 제4조 (이의 신청)

    평가 결과에 이의가 있는 직원은 결과를 통보받은 날부터 7일 이내에 인사팀에 이의를 신청할 수 있다.

    ##### 제5조 (출장 중인 직원의 평가)

    평가 기간에 장기 출장 중인 직원은 출장에서 돌아온 날부터 10일 이내에 자기 평가서를 인사팀에 제출한다.
"""

FINANCE_REGULATION = """\
    ---
    제목: 법인카드 관리 규정
    시행일자: 2025-04-01
    ---

    # 법인카드 관리 규정

    ##### 제1조 (목적)

    이 규정은 회사 법인카드의 발급, 사용 및 정산 절차를 정함을 목적으로 한다.

    ##### 제2조 (발급)

    법인카드는 부서장이 신청하면 재무팀이 발급하며, 한 부서에 한 장을 발급한다.

    ##### 제3조 (사용 한도)

    법인카드의 월 사용 한도는 부서마다 삼백만 원으로 한다. 한도를 넘는 지출은 재무팀장의 사전 승인을 받아야 한다.

    ##### 제4조 (사용 제한)

    법인카드는 유흥업소, 개인 물품 구입 및 현금 서비스에 사용할 수 없다.

    ##### 제5조 (출장 중 사용)

    출장 중 법인카드로 결제한 숙박비와 교통비는 출장에서 돌아온 날부터 5일 이내에 영수증을 붙여 정산한다.
"""

SCOPES = f"""\
defaults:
  collections: [company]
direct:
  collections: [company, hr]
slack:
  - workspace: {WORKSPACE}
    channel: {HR_CHANNEL}
    collections: [hr]
  - workspace: {WORKSPACE}
    channel: {FINANCE_CHANNEL}
    collections: [finance]
"""

# (channel, question): each question is worded to pull in another collection's text.
LEAK_PROBES = [
    (HR_CHANNEL, "법인카드 한도가 얼마야?"),
    (HR_CHANNEL, "출장에서 돌아오면 며칠 이내에 해야 해?"),
    (HR_CHANNEL, "법인카드 관리 규정 제3조"),
    (HR_CHANNEL, "연차는 며칠이야?"),
    (FINANCE_CHANNEL, "평가 결과에 이의 신청은 언제까지 해?"),
    (FINANCE_CHANNEL, "출장에서 돌아오면 며칠 이내에 해야 해?"),
    (FINANCE_CHANNEL, "인사평가 규정 제4조"),
    (LOBBY_CHANNEL, "출장 중 법인카드로 숙박비를 냈는데 정산은 언제까지야?"),
    (LOBBY_CHANNEL, "인사평가 이의 신청 기한은?"),
]
ALLOWED = {HR_CHANNEL: {"hr"}, FINANCE_CHANNEL: {"finance"}, LOBBY_CHANNEL: {"company"}}


def write_regulation(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def scoped_components(kiwi_tokenizer, tmp_path_factory) -> Components:
    """One index holding the samples (`company`), an HR and a finance regulation."""
    root = tmp_path_factory.mktemp("scoped-collections")
    components = build_components(make_settings(root / "data"), embedder=HashingEmbedder(), tokenizer=kiwi_tokenizer)
    ingestor = components.ingestor()
    for paths, collection in [
        ([SAMPLES], "company"),
        ([write_regulation(root / "hr", "인사평가규정.md", HR_REGULATION)], "hr"),
        ([write_regulation(root / "finance", "법인카드관리규정.md", FINANCE_REGULATION)], "finance"),
    ]:
        report = ingestor.ingest(paths, collection=collection)
        assert not report.failed, report.failed
    components.corpus.refresh()
    return components


@pytest.fixture(scope="module")
def scopes_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("scopes") / "scopes.yml"
    path.write_text(SCOPES, encoding="utf-8")
    return path


def collections_by_doc(components: Components) -> dict[str, str]:
    return {chunk.doc: chunk.collection for chunk in components.corpus.chunks}


def collection_of_chunk(components: Components, chunk_id: str) -> str:
    chunk = components.corpus.get(chunk_id)
    assert chunk is not None, f"cited chunk {chunk_id} is not in the index"
    return chunk.collection


async def ask(service: BotService, question: str, *, channel: str, is_direct: bool = False) -> Answer:
    scope = await service.scope_for(
        ScopeRequest(platform="slack", workspace=WORKSPACE, channel=channel, is_direct=is_direct)
    )
    turn = Turn(turn_id=f"scope-{channel}", text=question, user="U0ASKER",
                conversation_key=f"slack:{WORKSPACE}:{channel}:{abs(hash(question))}", scope=scope)
    events = [event async for event in service.answer(turn)]
    done = [event.answer for event in events if event.kind == AnswerEventKind.DONE and event.answer]
    assert done, f"no answer for {question!r}: {[(e.kind, e.text) for e in events]}"
    return done[0]


@pytest.fixture
def service(scoped_components, scopes_file) -> BotService:
    return BotService(pipeline=scoped_components.pipeline, store=StateStores.in_process(), metrics=Metrics(),
                      limits=LimitsConfig(user_burst=0, workspace_burst=0),
                      scopes=ScopeResolver.from_file(scopes_file))


class TestScopedCollectionsThroughTheService:
    @pytest.mark.parametrize(("channel", "question"), LEAK_PROBES)
    async def test_answer_cites_and_retrieves_only_the_channels_collections(
        self, service, scoped_components, channel, question
    ):
        answer = await ask(service, question, channel=channel)

        cited = {collection_of_chunk(scoped_components, c.chunk_id) for c in answer.citations if c.chunk_id}
        retrieved = {hit.chunk.collection for hit in answer.retrieved}
        assert cited <= ALLOWED[channel], [c.label for c in answer.citations]
        assert retrieved <= ALLOWED[channel]
        foreign_docs = {doc for doc, coll in collections_by_doc(scoped_components).items()
                        if coll not in ALLOWED[channel]}
        shown = " ".join([answer.text, *answer.followups, *(c.label for c in answer.citations)])
        assert not [doc for doc in foreign_docs if doc in shown], shown

    async def test_finance_channel_gets_the_card_limit_article(self, service):
        answer = await ask(service, "법인카드 한도가 얼마야?", channel=FINANCE_CHANNEL)

        assert "법인카드 관리 규정 제3조" in [c.label for c in answer.citations]
        assert "삼백만 원" in answer.text

    async def test_hr_channel_does_not_learn_the_card_limit(self, service):
        answer = await ask(service, "법인카드 한도가 얼마야?", channel=HR_CHANNEL)

        assert "삼백만 원" not in answer.text
        assert all(not c.label.startswith("법인카드") for c in answer.citations)

    async def test_same_trip_question_cites_each_channels_own_regulation(self, service):
        question = "출장에서 돌아오면 며칠 이내에 해야 해?"
        in_hr = await ask(service, question, channel=HR_CHANNEL)
        in_finance = await ask(service, question, channel=FINANCE_CHANNEL)

        assert "인사평가 규정 제5조" in [c.label for c in in_hr.citations]
        assert "법인카드 관리 규정 제5조" in [c.label for c in in_finance.citations]

    async def test_direct_message_searches_the_direct_collections(self, service, scoped_components):
        answer = await ask(service, "평가 결과에 이의 신청은 언제까지 해?", channel="D0ASKER", is_direct=True)

        assert "인사평가 규정 제4조" in [c.label for c in answer.citations]
        assert {collection_of_chunk(scoped_components, c.chunk_id) for c in answer.citations} <= {"company", "hr"}


@pytest.fixture
async def scoped_server(scoped_components, scopes_file, tmp_path) -> AsyncIterator[tuple[str, TimedSlackApi]]:
    """The real server (bot.server.server) with the scopes file, talking to a fake Slack Web API."""
    async with TimedSlackApi() as slack:
        settings = make_settings(tmp_path / "server", REGBOT_SCOPES_FILE=str(scopes_file), **slack_env(slack.api_url))
        limits = LimitsConfig(user_burst=0, workspace_burst=0)
        url, runner = await serve_app(create_app(build_runtime(settings, scoped_components, limits=limits)))
        try:
            yield url, slack
        finally:
            await runner.cleanup()


class TestScopedCollectionsOverSlack:
    async def test_channel_mentions_cite_only_their_channels_regulation(self, scoped_server):
        url, slack = scoped_server
        question = "출장에서 돌아오면 며칠 이내에 해야 해?"
        async with aiohttp.ClientSession() as http:
            sender = SlackEventSender(http)
            in_hr = mention(slack, question, channel=HR_CHANNEL)
            in_finance = mention(slack, question, channel=FINANCE_CHANNEL)
            assert await sender.deliver(url, event_callback(in_hr)) == 200
            assert await sender.deliver(url, event_callback(in_finance)) == 200

            hr_answer = await slack.wait_for(lambda: slack.answered(HR_CHANNEL, in_hr["ts"]), timeout_s=20)
            finance_answer = await slack.wait_for(
                lambda: slack.answered(FINANCE_CHANNEL, in_finance["ts"]), timeout_s=20
            )

        assert "인사평가 규정 제5조" in hr_answer.context_text
        assert "법인카드" not in hr_answer.context_text + hr_answer.answer_text
        assert "법인카드 관리 규정 제5조" in finance_answer.context_text
        assert "인사평가" not in finance_answer.context_text + finance_answer.answer_text


# --- the answering model's tool calls -------------------------------------------------------------------------


TOOL_PROBES = [  # each names the finance regulation, from a turn scoped to HR
    ("lookup_article", {"doc": "법인카드 관리 규정", "article": "제3조"}),
    ("search_regulations", {"query": "법인카드 사용 한도와 정산 기한"}),
    ("regulation_overview", {"doc": "법인카드 관리 규정"}),
]


@pytest.mark.parametrize(("name", "arguments"), TOOL_PROBES, ids=[name for name, _ in TOOL_PROBES])
async def test_a_tool_call_naming_another_collection_returns_nothing_from_it(scoped_components, name, arguments):
    from rag.llm.base import ToolCall
    from rag.models import Scope
    from rag.stages.agent_tools import AgentTools

    tools = AgentTools(lookup=scoped_components.lookup, search=scoped_components.retriever)
    call = ToolCall(id="toolu_probe", name=name, arguments=arguments)

    unscoped = await tools.run(call, None)
    scoped = await tools.run(call, Scope(collections=("hr",)))

    # Without a scope the call reaches the finance regulation (its text, or its outline), so there is a leak to see.
    assert "finance" in {c.collection for c in unscoped.chunks} or "목차" in unscoped.note
    assert {c.collection for c in scoped.chunks} <= {"hr"}
    assert "목차" not in scoped.note
