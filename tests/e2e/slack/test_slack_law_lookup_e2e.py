"""`/regulation 근로기준법 제60조` on the real server, with the statute from ../shared/corpus indexed."""

from __future__ import annotations

import json

import aiohttp
import pytest

from bot.app import build_components
from rag import messages
from testkit import KOLAW, SAMPLES, SHARED_MISSING, make_settings
from tests.e2e.fakes.slack_api import FakeSlackApi
from tests.e2e.slack.conftest import BOT_TOKEN, SIGNING_SECRET, SlackSender

LABOR_STANDARDS_ACT = KOLAW / "근로기준법.md"

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def sample_components(kiwi_tokenizer, tmp_path_factory):
    """The samples plus 근로기준법 (overrides the session-wide samples-only index for this module)."""
    if not LABOR_STANDARDS_ACT.exists():
        pytest.skip(SHARED_MISSING)
    data_dir = tmp_path_factory.mktemp("slack-law-index")
    # A lookup needs no dense index: lexical and structural indexes only, to keep this fixture quick.
    components = build_components(make_settings(data_dir), tokenizer=kiwi_tokenizer, dense=False)
    report = components.ingestor().ingest([SAMPLES, LABOR_STANDARDS_ACT])
    assert not report.failed, report.failed
    components.corpus.refresh()
    return components


async def test_regulation_command_answers_with_the_article(start_regbot, slack_api: FakeSlackApi):
    server = await start_regbot(
        SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=slack_api.api_url
    )
    async with aiohttp.ClientSession() as session:
        send = SlackSender(server.url, session, slack_api)

        status, body = await send.command("근로기준법 제60조", hook="law-60")

    assert status == 200
    assert json.loads(body)["text"] == messages.STATUS_SEARCHING
    hook, response = (await slack_api.wait_for(lambda: slack_api.responses))[0]
    assert (hook, response["response_type"]) == ("law-60", "ephemeral")
    assert "근로기준법 제60조" in response["text"]
    assert "연차" in response["text"]
    sources = json.dumps([b for b in response["blocks"] if b.get("block_id") == "regbot_sources"], ensure_ascii=False)
    assert "근로기준법 제60조" in sources
