"""The start-up block tells the truth: an adapter it reports as off is not mounted (its route is 404), one it
reports as on answers, and the index figures are the served index's. `GET /` without the playground names the
routes that are on."""

from __future__ import annotations

import aiohttp
import pytest

from bot.server.startup import summarize

ROUTES = {"teams": ("POST", "/api/messages"), "playground": ("POST", "/api/playground/ask"),
          "slack": ("POST", "/slack/events")}


@pytest.mark.parametrize("env", [{}, {"REGBOT_PLAYGROUND": "true"}, {"TEAMS_ALLOW_ANONYMOUS": "true"},
                                 {"SLACK_BOT_TOKEN": "xoxb-1"}])
async def test_reported_switches_match_the_mounted_routes(start_regbot, env):
    server = await start_regbot(**env)
    summary = summarize(server.runtime.settings, server.runtime.components)
    async with aiohttp.ClientSession() as http:
        for name, (method, path) in ROUTES.items():
            async with http.request(method, server.url + path, json={}) as response:
                mounted = response.status != 404
            assert getattr(summary, name).on == mounted, f"{name}: reported {getattr(summary, name)}, {path} mounted"


async def test_index_figures_are_the_served_index(start_regbot, sample_components):
    server = await start_regbot()
    summary = summarize(server.runtime.settings, server.runtime.components)
    assert summary.index_chunks == len(sample_components.corpus.chunks) > 0
    assert summary.index_documents == len({c.doc for c in sample_components.corpus.chunks})
    assert "offline" in summary.llm and summary.state.startswith("in-process")


async def test_root_without_the_playground_names_the_routes_that_are_on(start_regbot):
    server = await start_regbot(TEAMS_ALLOW_ANONYMOUS="true", REGBOT_ADMIN_TOKEN="t0ken")
    async with aiohttp.ClientSession() as http, http.get(server.url + "/") as response:
        assert response.status == 200
        body = await response.json()
    assert {"GET /healthz", "GET /readyz", "GET /metrics", "POST /api/messages", "GET /admin"} <= set(body["routes"])
    assert not any("/slack/" in r or "/api/playground" in r for r in body["routes"])
    assert "REGBOT_PLAYGROUND=true" in body["playground"]


async def test_root_with_the_playground_is_the_playground(start_regbot):
    server = await start_regbot(REGBOT_PLAYGROUND="true")
    async with aiohttp.ClientSession() as http, http.get(server.url + "/") as response:
        assert response.status == 200 and response.content_type == "text/html"


async def test_admin_page_saved_with_curl_carries_its_stylesheet(start_regbot):
    import base64
    import hashlib
    import re

    server = await start_regbot(REGBOT_ADMIN_TOKEN="t0ken")
    async with aiohttp.ClientSession() as http, \
            http.get(server.url + "/admin", headers={"Authorization": "Bearer t0ken"}) as response:
        assert response.status == 200
        page = await response.text()
        csp = response.headers["Content-Security-Policy"]
    assert '<link rel="stylesheet"' not in page
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert ".cards" in css
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in csp and "script-src 'self'" in csp


async def test_the_playgrounds_examples_name_what_is_indexed(start_regbot, sample_components):
    import re

    server = await start_regbot(REGBOT_PLAYGROUND="true")
    async with aiohttp.ClientSession() as http, http.get(server.url + "/") as response:
        page = await response.text()
    examples = re.findall(r'<button type="button" class="example">([^<]+)</button>', page)
    doc, article = re.fullmatch(r"(.+) (제\d+조(?:의\d+)?) 보여줘", examples[0]).groups()
    assert any(c.doc == doc and c.article == article for c in sample_components.corpus.chunks)
    titles = {c.title for c in sample_components.corpus.chunks}
    assert all(e.removesuffix("에 대해 알려줘") in titles for e in examples[1:]) and len(examples) == 3
