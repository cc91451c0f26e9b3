"""LlmOverOffline: the shape every LLM stage shares (its reply, or None and the offline sibling)."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from rag.stages.llm_stage import LlmOverOffline

SCHEMA = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}


class _Reply(BaseModel):
    word: str


class _Offline:
    """The offline sibling a test stage stands on."""


class _EchoStage(LlmOverOffline[_Offline]):
    stage = "echo"


def _stage(llm) -> _EchoStage:
    return _EchoStage(llm, fallback=_Offline(), prompt="답하세요.", timeout_s=1.0, hang_s=0.5)


async def test_the_reply_is_read_into_the_stage_model_and_the_call_is_named_for_the_stage(scripted_llm) -> None:
    llm = scripted_llm(replies=[{"word": "연차"}])

    reply = await _stage(llm).ask("질문", _Reply, schema=SCHEMA, max_tokens=50)

    assert reply == _Reply(word="연차")
    assert llm.requests[0].stage == "echo"
    assert llm.requests[0].max_tokens == 50


async def test_an_unavailable_llm_gives_none_and_logs_the_fallback(scripted_llm, caplog) -> None:
    llm = scripted_llm()  # nothing scripted: the call is unavailable

    with caplog.at_level(logging.WARNING, logger="rag.stages.llm_stage"):
        reply = await _stage(llm).ask("질문", _Reply, schema=SCHEMA, max_tokens=50)

    assert reply is None
    assert "echo falls back offline" in caplog.text


async def test_a_reply_that_does_not_fit_the_model_gives_none(scripted_llm) -> None:
    reply = await _stage(scripted_llm(replies=[{"other": 1}])).ask("질문", _Reply, schema=SCHEMA, max_tokens=50)

    assert reply is None


@pytest.mark.parametrize("bounds", [{"timeout_s": 0.0, "hang_s": 1.0}, {"timeout_s": 1.0, "hang_s": 0.0}])
def test_a_stage_without_a_positive_bound_is_refused(scripted_llm, bounds) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        _EchoStage(scripted_llm(), fallback=_Offline(), prompt="", **bounds)
