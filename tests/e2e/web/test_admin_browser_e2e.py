"""The operator page in headless Chromium over a scripted week of turns (several hundred, mixed outcomes and votes).

The week replays real pipeline answers over the sample regulations through the server's own recorder at chosen
times, so the figures are known in advance; the page's numbers are read from the DOM and a screenshot goes to
test-artifacts/admin-report.png (checked by eye: Korean labels, charts).
"""

from __future__ import annotations

import time
from collections import Counter

from adapters.base import Feedback
from bot.report.records import turn_outcome
from rag.models import AnswerEventKind, Turn

ADMIN_TOKEN = "browser-admin-token"
DAY = 86400.0
ANSWERED = ["연차는 며칠이야?", "출장 일비는 얼마야?", "경조휴가 며칠?", "연차는 며칠이야?"]
REFUSED = ["회사 주차장 요금은 얼마예요?", "주차 스티커 어디서 받아요?", "구내식당 메뉴 알려줘",
           "통근버스 노선이 어떻게 돼?"]
SMALL_TALK = ["안녕하세요"]
PLATFORMS = ("slack", "teams", "web")
KEYS = {"slack": "slack:T0TEAM:C0HR:{i}", "teams": "teams:tenant-1:a:1chat-{i}", "web": "web:tab{i:08d}"}


async def answers_of(pipeline, questions: list[str]) -> dict[str, object]:
    answers = {}
    for question in dict.fromkeys(questions):
        async for event in pipeline.run(Turn(turn_id="probe", text=question)):
            if event.kind == AnswerEventKind.DONE:
                answers[question] = event.answer
    return answers


async def replay_week(server, pipeline, *, turns: int = 350) -> Counter:
    """Turn i: day i % 7, platform i % 3; mostly answers, every 5th a refusal, a few small talk, limits and errors.
    Every 9th answered turn gets a 👍, every 13th a 👎. Returns the expected counts."""
    questions = ANSWERED + REFUSED + SMALL_TALK
    answers = await answers_of(pipeline, questions)
    recorder = server.runtime.recorder
    start = time.time() - 7 * DAY + 600
    expected: Counter = Counter()
    for i in range(turns):
        platform = PLATFORMS[i % 3]
        if i % 5 == 0:
            question, outcome = REFUSED[(i // 5) % len(REFUSED)], "answered"
        elif i % 31 == 0:
            question, outcome = SMALL_TALK[0], "answered"
        elif i % 47 == 0:
            question, outcome = ANSWERED[0], "rate_limited"
        elif i % 53 == 0:
            question, outcome = ANSWERED[1], "failed"
        else:
            question, outcome = ANSWERED[i % len(ANSWERED)], "answered"
        answer = answers[question] if outcome == "answered" else None
        key = KEYS[platform].format(i=i)
        turn = Turn(turn_id=f"week-{i}", text=question, user=f"U{i % 17}", conversation_key=key)
        at = start + (i % 7) * DAY + i
        recorder.turn_ended(turn, platform=platform, outcome=outcome, answer=answer, latency_s=0.05 + (i % 10) / 100,
                            at=at)
        # What the pipeline made of the question: a refusal, or (on the sample corpus without e5) a hedge.
        kind = turn_outcome(outcome, answer)
        expected[kind] += 1
        expected[f"platform:{platform}"] += 1
        if kind == "not_covered" and "주차" in question:
            expected["theme:주차"] += 1
        if kind == "answered" and i % 9 == 0:
            recorder.feedback_given(Feedback(platform=platform, conversation_key=key, user="u", rating="up",
                                             turn_id=turn.turn_id), at=at + 30)
            expected["up"] += 1
        if kind in ("answered", "hedged", "not_covered") and i % 13 == 0:
            recorder.feedback_given(Feedback(platform=platform, conversation_key=key, user="u", rating="down",
                                             turn_id=turn.turn_id), at=at + 30)
            expected["down"] += 1
    await recorder.flush()
    return expected


async def screenshot_whole_page(page, path) -> None:
    viewport = page.viewport_size
    height = await page.evaluate("document.documentElement.scrollHeight")
    await page.set_viewport_size({"width": viewport["width"], "height": max(height, viewport["height"])})
    await page.screenshot(path=str(path))
    await page.set_viewport_size(viewport)


async def test_admin_page_shows_the_week_with_charts(start_regbot, sample_components, chromium, artifacts_dir):
    server = await start_regbot(REGBOT_ADMIN_TOKEN=ADMIN_TOKEN)
    expected = await replay_week(server, sample_components.pipeline)
    context = await chromium.new_context(locale="ko-KR", viewport={"width": 1366, "height": 800},
                                         extra_http_headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    try:
        page = await context.new_page()
        problems: list[str] = []
        page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
        response = await page.goto(server.url + "/admin?since=8d")
        assert response.status == 200
        await screenshot_whole_page(page, artifacts_dir / "admin-report.png")

        async def metric(name: str) -> str:
            return (await page.locator(f'[data-metric="{name}"]').text_content()).strip()

        assert await metric("turns") == "350"
        assert await metric("answered") == str(expected["answered"])
        assert await metric("feedback_up") == str(expected["up"])
        assert await metric("feedback_down") == str(expected["down"])
        rate = expected["not_covered"] / (expected["answered"] + expected["hedged"] + expected["not_covered"])
        assert await metric("refusal_rate") == f"{rate * 100:.1f}%"

        volume = page.locator('[data-section="volume"] svg rect.bar')
        values = [int(v) for v in await volume.evaluate_all("bars => bars.map(b => b.dataset.value)")]
        assert sum(values) == 350
        days = set(await volume.evaluate_all("bars => bars.map(b => b.dataset.day)"))
        assert len(days) == 7
        assert await page.locator("svg.chart").count() >= 5
        parking = page.locator('[data-section="themes"] rect.bar[data-label="주차"]')
        assert await parking.get_attribute("data-value") == str(expected["theme:주차"])
        top = page.locator('[data-section="top-articles"] rect.bar').first
        assert (await top.get_attribute("data-label")).startswith("취업규칙 제20조")
        assert await page.locator('[data-table="disliked"] tbody tr').count() == min(expected["down"], 20)
        heading = await page.locator("h1").text_content()
        assert heading == "regbot 이용 보고서"
        # The inlined stylesheet applied (its hash is in the CSP: no violation): the cards are laid out in a grid.
        assert await page.locator(".cards").evaluate("e => getComputedStyle(e).display") == "grid"
        assert problems == []
    finally:
        await context.close()
