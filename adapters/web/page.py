"""The playground page: static files shipped in the package, the HTML filled with the labels at start-up."""

from __future__ import annotations

import html
import json
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
    return {name: value for name, value in vars(labels).items() if name.isupper()}


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


def render_page(config: dict[str, Any]) -> str:
    """index.html with its labels, example questions and the script's config filled in."""
    examples = "".join(
        f'<li><button type="button" class="example">{html.escape(question)}</button></li>'
        for question in labels.EXAMPLE_QUESTIONS
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


__all__ = ["STATIC_FILES", "STATIC_PREFIX", "page_config", "page_labels", "render_page", "static_text"]
