"""Scopes fail closed on the playground (issue 28): an empty list or a file without `defaults` shows nothing."""

from __future__ import annotations

import aiohttp
import pytest

from tests.e2e.web.test_playground_http_e2e import ask

LOOKUP = "취업규칙 제1조"


@pytest.mark.parametrize("scopes", [
    "defaults:\n  collections: []\n",
    "slack:\n  - workspace: T0001\n    collections: [default]\n",
], ids=["empty-list", "no-defaults"])
async def test_playground_reads_nothing_the_scopes_do_not_allow(start_regbot, tmp_path, scopes: str) -> None:
    path = tmp_path / "scopes.yaml"
    path.write_text(scopes, encoding="utf-8")
    server = await start_regbot(REGBOT_PLAYGROUND="true", REGBOT_SCOPES_FILE=str(path))

    async with aiohttp.ClientSession() as http:
        _, frames = await ask(http, server.url, LOOKUP)
        async with http.get(server.url + "/api/playground/article",
                            params={"doc": "취업규칙", "article": "제1조"}) as article:
            article_status = article.status

    answer = frames[-1][1]["answer"]
    assert answer["citations"] == []
    assert "취업규칙 제1조" not in "".join(data.get("text", "") for name, data in frames if name == "delta")
    assert article_status == 404


async def test_playground_reads_what_the_defaults_allow(start_regbot, tmp_path) -> None:
    path = tmp_path / "scopes.yaml"
    path.write_text("defaults:\n  collections: [default]\n", encoding="utf-8")
    server = await start_regbot(REGBOT_PLAYGROUND="true", REGBOT_SCOPES_FILE=str(path))

    async with aiohttp.ClientSession() as http:
        _, frames = await ask(http, server.url, LOOKUP)

    assert ("취업규칙", "제1조") in {(c["doc"], c["article"]) for c in frames[-1][1]["answer"]["citations"]}
