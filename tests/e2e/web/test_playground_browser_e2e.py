"""The playground in headless Chromium against the real server over the sample regulations.

A person types a question, watches the answer stream in with its status line, opens the cited article, asks a
follow-up in the same thread and gives a 👍. Screenshots go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

from adapters.web import labels
from bot.service.limits import LimitsConfig
from rag import messages
from tests.e2e.recorded import recorded_votes

QUESTION = "입사 1년 지나면 연차 며칠 받아?"
ANSWER_TIMEOUT_MS = 30_000

# Records what the page showed while answering: each status line, and whether answer text appeared while the
# answer was still marked busy (that is, it streamed in rather than arriving at once).
WATCH_PAGE = """() => {
  window.__seen = {statuses: [], streamedWhileBusy: false};
  new MutationObserver(() => {
    const status = document.getElementById("live-status").textContent;
    if (status && window.__seen.statuses.at(-1) !== status) window.__seen.statuses.push(status);
    for (const answer of document.querySelectorAll('.turn-bot article[aria-busy="true"] .answer')) {
      if (answer.textContent.trim()) window.__seen.streamedWhileBusy = true;
    }
  }).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


async def open_playground(context, url: str):
    page = await context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    await page.goto(url + "/")
    await page.evaluate(WATCH_PAGE)
    return page, problems


async def screenshot_whole_page(page, path) -> None:
    """The whole page at its current width, with the sticky header and composer where a reader sees them."""
    viewport = page.viewport_size
    height = await page.evaluate("document.documentElement.scrollHeight")
    await page.set_viewport_size({"width": viewport["width"], "height": max(height, viewport["height"])})
    await page.screenshot(path=str(path))
    await page.set_viewport_size(viewport)


async def wait_for_answers(page, count: int) -> None:
    """Until `count` answers have finished streaming."""
    await page.locator('.turn-bot article[aria-busy="false"]').nth(count - 1).wait_for(timeout=ANSWER_TIMEOUT_MS)


async def test_question_citation_followup_and_feedback_in_one_thread(start_regbot, browser_context, artifacts_dir):
    server = await start_regbot(REGBOT_PLAYGROUND="true")
    page, problems = await open_playground(browser_context, server.url)

    # Ask with the keyboard: type, then Enter.
    question = page.get_by_label(labels.QUESTION_LABEL, exact=True)
    await question.fill(QUESTION)
    await question.press("Enter")
    await wait_for_answers(page, 1)

    first = page.locator(".turn-bot").nth(0)
    assert "15일" in await first.locator(".answer").inner_text()
    seen = await page.evaluate("window.__seen")
    assert messages.STATUS_SEARCHING in seen["statuses"]
    assert seen["streamedWhileBusy"] is True
    citation = first.locator(".sources button", has_text="취업규칙 제20조").first
    await citation.wait_for()
    await screenshot_whole_page(page, artifacts_dir / "playground.png")

    # The citation opens the article text in the side panel; Escape closes it and focus returns.
    await citation.click()
    panel = page.locator("#article-panel")
    await panel.get_by_text("취업규칙 제20조(연차유급휴가)").wait_for()
    assert "15일의 연차유급휴가를 준다" in await panel.inner_text()
    assert await page.evaluate("document.activeElement.id") == "article-heading"
    await page.screenshot(path=str(artifacts_dir / "playground-article.png"))
    await page.keyboard.press("Escape")
    assert await panel.is_hidden()
    assert await citation.evaluate("button => button === document.activeElement")

    # 👍 goes through the service's feedback path, for the turn it rated.
    await first.get_by_role("button", name=labels.FEEDBACK_UP).click()
    await first.get_by_text(messages.FEEDBACK_THANKS).wait_for()
    _, [vote] = await recorded_votes(server)
    assert (vote.platform, vote.rating) == ("web", "up") and vote.turn_id

    # A follow-up button asks in the same thread: the service sees both questions under this tab's key.
    followup = first.locator(".followups button").first
    followup_text = await followup.inner_text()
    await followup.click()
    await wait_for_answers(page, 2)
    assert await page.locator(".turn-user .bubble").all_inner_texts() == [QUESTION, followup_text]
    assert await page.locator(".turn-bot").nth(1).locator(".answer").inner_text() != ""
    conversation = await page.evaluate("sessionStorage.getItem('regbot.playground.conversation')")
    stored = await server.runtime.service.history(f"web:{conversation}")
    assert [m.content for m in stored if m.role == "user"] == [QUESTION, followup_text]
    assert problems == []


async def test_reloaded_tab_shows_its_thread_and_new_conversation_starts_over(start_regbot, browser_context):
    server = await start_regbot(REGBOT_PLAYGROUND="true")
    page, _ = await open_playground(browser_context, server.url)
    example = page.locator("button.example").first  # drawn from the index: whatever the first one asks
    asked = (await example.text_content()).strip()
    await example.click()
    await wait_for_answers(page, 1)
    conversation = await page.evaluate("sessionStorage.getItem('regbot.playground.conversation')")

    await page.reload()
    await page.locator(".turn-user .bubble", has_text=asked).wait_for()
    assert await page.evaluate("sessionStorage.getItem('regbot.playground.conversation')") == conversation

    await page.get_by_role("button", name=labels.NEW_CONVERSATION).click()
    assert await page.locator(".turn").count() == 0
    assert await page.evaluate("sessionStorage.getItem('regbot.playground.conversation')") != conversation


async def test_phone_width_fits_without_sideways_scrolling(start_regbot, browser_context, artifacts_dir):
    server = await start_regbot(REGBOT_PLAYGROUND="true")
    page, problems = await open_playground(browser_context, server.url)
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.get_by_label(labels.QUESTION_LABEL, exact=True).fill(QUESTION)
    await page.get_by_role("button", name=labels.SEND).click()
    await wait_for_answers(page, 1)

    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await screenshot_whole_page(page, artifacts_dir / "playground-phone.png")
    await page.locator(".turn-bot .sources button").first.click()
    await page.locator("#article-panel h3").wait_for()
    box = await page.locator("#article-panel").bounding_box()
    assert box is not None and box["width"] <= 390
    await page.screenshot(path=str(artifacts_dir / "playground-phone-article.png"))
    assert problems == []


async def test_markup_stays_text_and_a_rate_limited_question_says_when_to_retry(start_regbot, browser_context):
    limits = LimitsConfig(user_burst=1, user_refill_per_min=0.5, workspace_burst=1000)
    server = await start_regbot(limits=limits, REGBOT_PLAYGROUND="true")
    page, problems = await open_playground(browser_context, server.url)
    question = page.get_by_label(labels.QUESTION_LABEL, exact=True)

    await question.fill('<img src=x onerror="document.title=1">연차는 며칠이야?')
    await question.press("Enter")
    await wait_for_answers(page, 1)
    await question.fill("경조휴가는 며칠이야?")
    await question.press("Enter")
    await wait_for_answers(page, 2)

    assert await page.locator(".turn-user img").count() == 0
    assert "<img" in await page.locator(".turn-user .bubble").first.inner_text()
    error = page.locator(".turn-bot").nth(1).get_by_role("alert")
    assert (await error.inner_text()).startswith(messages.RATE_LIMITED.split("{")[0])
    assert problems == []


async def test_a_tapped_korean_reference_under_an_english_answer_keeps_english_labels(start_regbot,
                                                                                     browser_context):
    server = await start_regbot(REGBOT_PLAYGROUND="true")
    page, problems = await open_playground(browser_context, server.url)
    english = labels.ANSWER_LABELS["en"]
    question = page.get_by_label(labels.QUESTION_LABEL, exact=True)
    await question.fill("After one full year here, how much paid annual leave is mine?")
    await question.press("Enter")
    await wait_for_answers(page, 1)
    first = page.locator(".turn-bot").nth(0)
    assert await first.get_by_role("button", name=english["FEEDBACK_UP"]).count() == 1

    # The follow-up button is a bare Korean reference: its letters read Korean (the response header says so),
    # but the conversation is English and the answer says it; the labels under it follow the answer.
    followup = first.locator(".followups button").first
    assert await followup.inner_text() == "취업규칙 제21조(연차휴가의 사용 촉진)"
    await followup.click()
    await wait_for_answers(page, 2)
    second = page.locator(".turn-bot").nth(1)
    assert await second.get_by_role("button", name=english["FEEDBACK_UP"]).count() == 1
    assert await second.get_by_role("heading", name=english["SOURCES_CAPTION"]).count() == 1
    assert problems == []
