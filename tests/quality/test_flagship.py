"""The questions an employee asks first (`flagship.yaml`), on ko-law with the real embedder, offline: the article
that answers ranks first and the answer's first sentence holds the figure asked for."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
import yaml

from testkit import SHARED, SHARED_MISSING, make_settings

FLAGSHIP = yaml.safe_load((Path(__file__).with_name("flagship.yaml")).read_text(encoding="utf-8"))["questions"]
pytestmark = [pytest.mark.shared, pytest.mark.slow,
              pytest.mark.skipif(not (SHARED / "corpus" / "ko-law").is_dir(), reason=SHARED_MISSING)]


@pytest.fixture(scope="module")
def kolaw_components(kolaw_data_dir, kiwi_tokenizer):
    from bot.app import build_components

    return build_components(make_settings(kolaw_data_dir), tokenizer=kiwi_tokenizer)


def first_sentence(text: str) -> str:
    """The answer up to its first citation marker: what a reader takes as the answer."""
    marker = re.search(r"\[\d+\]", text)
    return text[: marker.start()] if marker else text.split("\n", 1)[0]


# A question the bot does not answer right yet carries `known_gap: <what goes wrong>` in flagship.yaml: it runs as a
# strict xfail, so fixing it fails the suite until the entry is removed.
CASES = [pytest.param(c, id=c["question"], marks=pytest.mark.xfail(strict=True, reason=c["known_gap"]))
         if c.get("known_gap") else pytest.param(c, id=c["question"]) for c in FLAGSHIP]


@pytest.mark.parametrize("case", CASES)
def test_flagship_question_leads_with_its_article_and_figure(kolaw_components, case):
    from rag.pipeline import collect

    answer, _ = asyncio.run(collect(kolaw_components.pipeline, case["question"]))
    assert answer is not None and answer.grounded, answer.text if answer else "no answer"
    top = answer.retrieved[0].chunk
    names = kolaw_components.lookup.names()
    wanted = (names.resolve(case["doc"]).doc or case["doc"]).replace(" ", "")
    assert (top.doc.replace(" ", ""), top.article) in {(wanted, a) for a in case["articles"]}, \
        f"ranked first: {top.doc} {top.article}"
    lead = re.sub(r"\s+", "", first_sentence(answer.text))
    assert any(re.sub(r"\s+", "", f) in lead for f in str(case["figure"]).split("|")), answer.text[:300]
