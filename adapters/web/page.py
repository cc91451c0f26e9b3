"""The playground page: static files shipped in the package, the HTML filled with the labels at start-up."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Any

from adapters.web import labels
from rag import messages

STATIC_PREFIX = "/playground/static"
STATIC_FILES = {"playground.js": "text/javascript", "playground.css": "text/css"}

# Core sentences the script shows itself (a dropped connection, a failed request, thanks for a vote).
_PAGE_MESSAGES = ("INTERNAL_ERROR", "STREAM_INTERRUPTED", "FEEDBACK_THANKS")


def static_text(name: str) -> str:
    """A file of `adapters/web/static/`, read from the installed package."""
    return resources.files("adapters.web").joinpath("static", name).read_text(encoding="utf-8")


def page_labels() -> dict[str, Any]:
    """Every label of `labels.py`, by its constant name."""
    return {name: value for name, value in vars(labels).items() if name.isupper() and not name.startswith("_")}


def page_config(*, api: dict[str, str], articles: bool) -> dict[str, Any]:
    """What the script reads from the page: labels, core messages, endpoint paths, features."""
    return {
        "labels": page_labels(),
        "messages": {name: getattr(messages, name) for name in _PAGE_MESSAGES},
        "api": api,
        "articles": articles,
    }


def _script_json(value: Any) -> str:
    # Inside <script> only `</` could end the element early; \u003c keeps the JSON valid and inert.
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


EXAMPLE_TITLE_CHARS = 15  # a title longer than this makes a button that wraps to three lines on a phone


def example_questions(documents: Sequence[tuple[str, Sequence[tuple[str, str]]]], *, at_most: int = 3
                      ) -> tuple[str, ...]:
    """Example questions from what is indexed: `documents` are (name, [(article label, title), …]) in the order
    to draw from. The first asks for an article of the first document that exists ("여비 규정 제5조 보여줘"),
    the others ask about the most specific (longest fitting) article title in the middle half of each document
    ("국내 출장 여비에 대해 알려줘"): past the opening articles (목적, 정의), which make dull examples."""
    out: list[str] = []
    for doc, articles in documents:
        if not articles:
            continue
        if not out:
            article, _ = articles[len(articles) // 3]
            out.append(labels.EXAMPLE_LOOKUP.format(doc=doc, article=article))
        if len(out) < at_most:
            middle = articles[len(articles) // 4: max(len(articles) * 3 // 4, 1)]
            # The longest title that still fits a button is the most specific topic.
            fitting = [item for item in middle if len(item[1]) <= EXAMPLE_TITLE_CHARS] or middle
            _, title = max(fitting, key=lambda item: len(item[1]))
            question = labels.EXAMPLE_ABOUT.format(title=title)
            if question not in out:
                out.append(question)
        if len(out) >= at_most:
            break
    return tuple(out)


def render_page(config: dict[str, Any], *, examples: Sequence[str] = ()) -> str:
    """index.html with its labels, example questions (`labels.EXAMPLE_QUESTIONS` when none are given) and the
    script's config filled in."""
    examples = "".join(
        f'<li><button type="button" class="example">{html.escape(question)}</button></li>'
        for question in (examples or labels.EXAMPLE_QUESTIONS)
    )
    text = {
        key: html.escape(getattr(labels, key.upper()))
        for key in (
            "page_title", "heading", "badge", "intro", "read_only_note", "examples_caption", "conversation_label",
            "question_label", "question_placeholder", "question_hint", "send", "new_conversation", "article_panel",
            "close",
        )
    }
    return Template(static_text("index.html")).substitute(
        text, static_prefix=STATIC_PREFIX, example_buttons=examples, config_json=_script_json(config)
    )


__all__ = ["STATIC_FILES", "STATIC_PREFIX", "example_questions", "page_config", "page_labels", "render_page",
           "static_text"]
