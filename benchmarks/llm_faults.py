"""What a user gets, and when, for each way the LLM can fail, on both APIs. Prints JSON.

    .venv/bin/python benchmarks/llm_faults.py [--repeat N] [--api anthropic|openai] [--repo DIR]

A scripted fake of the Anthropic Messages and the OpenAI-compatible APIs (tests/fakes/llm_api.py) runs as an
aiohttp server on 127.0.0.1; the bot is wired exactly as in production (`build_components` with
`REGBOT_LLM=anthropic|openai` and the base URL, default timeouts and breaker) over the bundled samples. For each
fault it asks one question and records the time to the first status line, to the first answer text, the total,
the outcome (`llm` answer, `quoted` offline answer with its note, `error` message, `empty`), the LLM calls, and
then the total time of a second question (the breaker, when it opened, makes that one skip the LLM).

Faults: `ok` (a normal run), `non_json` (200 with an HTML body, every stage), `empty_stream` (the answer
stream is an empty body), `no_text` (a well-formed answer stream without any text), `hang` (the server
accepts and never sends a byte, every stage), `500` (every call), `429` (`retry-after: 1` on every call).
`--repo DIR` runs another checkout's code (e.g. the baseline) with the same fake server; a hang there can
take a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

QUESTION = "입사 1년 지나면 연차 며칠 받아?"
SECOND_QUESTION = "병가는 며칠까지 쓸 수 있어?"
FAULTS = ("ok", "non_json", "empty_stream", "no_text", "hang", "500", "429")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _scripts(fault: str):
    from tests.fakes.llm_api import EMPTY_STREAM, HANG, NON_JSON, as_json, status, streamed

    understood = as_json({"standalone_question": QUESTION, "route": "search", "compound": False,
                          "search_queries": [QUESTION], "keywords": [], "intent": "연차", "answer_style": "concise"})
    graded = as_json({"score": 90, "missing": [], "relevant": []})
    answer = streamed("1년간 80퍼센트 이상 출근한 직원에게는 ", "15일의 연차유급휴가를 줘요 [1].",
                      "\n<후속질문>\n반차로도 쓸 수 있어?\n연차 신청은 언제까지 해야 해?")
    every = {"non_json": NON_JSON, "hang": HANG, "500": status(500), "429": status(429, {"retry-after": "1"})}
    if fault in every:
        return {stage: [every[fault]] for stage in ("understand", "grade", "answer", "verify", "followups",
                                                    "rewrite", "revise")}
    scripts = {"understand": [understood], "grade": [graded], "answer": [answer],
               "verify": [as_json({"verdicts": [{"claim": 1, "supported": True}]})]}
    if fault == "empty_stream":
        scripts["answer"] = [EMPTY_STREAM]
    if fault == "no_text":
        scripts["answer"] = [streamed()]  # a well-formed stream that ends without text
    return scripts


async def _ask(pipeline, question: str) -> dict:
    from rag.models import AnswerEventKind, Turn

    started = time.perf_counter()
    first_status = first_text = None
    text, answer, error = [], None, ""
    async for event in pipeline.run(Turn(turn_id="bench", text=question)):
        now = time.perf_counter() - started
        if event.kind == AnswerEventKind.STATUS and first_status is None:
            first_status = now
        elif event.kind == AnswerEventKind.DELTA:
            first_text = now if first_text is None else first_text
            text.append(event.text)
        elif event.kind == AnswerEventKind.ERROR:
            error = event.text
        elif event.kind == AnswerEventKind.DONE:
            answer = event.answer
    total = time.perf_counter() - started
    shown = (answer.text if answer else "".join(text) + error).strip()
    if answer is None:
        outcome = "error"
    elif not shown:
        outcome = "empty"
    elif "원문을 그대로 인용" in shown:
        outcome = "quoted"
    else:
        outcome = "llm"
    return {"first_status_s": round(first_status or total, 3), "first_text_s": round(first_text or total, 3),
            "total_s": round(total, 3), "outcome": outcome, "citations": len(answer.citations) if answer else 0,
            "llm_calls": answer.llm_calls if answer else None}


async def _run_fault(api: str, fault: str, data_dir: Path, tokenizer, embedder) -> dict:
    from aiohttp import web

    from bot.app import build_components
    from bot.config import Settings
    from tests.fakes.llm_api import FakeLlmApi

    fake = FakeLlmApi(api, **_scripts(fault))
    runner = web.AppRunner(fake.aiohttp_app())
    await runner.setup()
    port = _free_port()
    # A stalled handler never ends: do not wait the default 60 s for it on cleanup.
    await web.TCPSite(runner, "127.0.0.1", port, shutdown_timeout=0.5).start()
    base = f"http://127.0.0.1:{port}"
    env = {"REGBOT_DATA_DIR": str(data_dir), "REGBOT_LLM": api}
    if api == "anthropic":
        env |= {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": base}
    else:
        env |= {"OPENAI_BASE_URL": f"{base}/v1", "REGBOT_OPENAI_MODEL": "fake"}
    components = build_components(Settings(**env), embedder=embedder, tokenizer=tokenizer)
    try:
        first = await _ask(components.pipeline, QUESTION)
        second = await _ask(components.pipeline, SECOND_QUESTION)
    finally:
        await components.aclose()
        await runner.cleanup()
    return {**first, "second_total_s": second["total_s"], "second_outcome": second["outcome"],
            "requests_received": fake.calls()}


def _median_row(rows: list[dict]) -> dict:
    out = dict(rows[-1])
    for key in ("first_status_s", "first_text_s", "total_s", "second_total_s"):
        out[key] = round(statistics.median(r[key] for r in rows), 3)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--api", choices=("anthropic", "openai"), action="append")
    parser.add_argument("--fault", choices=FAULTS, action="append")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    tests_dir = Path(__file__).resolve().parent.parent / "tests"
    sys.path.insert(0, str(tests_dir))  # testkit (HashingEmbedder)
    sys.path.insert(0, str(tests_dir.parent))  # tests.fakes from this checkout, whatever --repo says
    sys.path.insert(0, str(args.repo.resolve()))  # first: the code under test
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "OPENAI_", "REGBOT_")):
            del os.environ[name]

    from rag.retrieval.tokenizer import KiwiTokenizer
    from testkit import HashingEmbedder

    tokenizer = KiwiTokenizer()
    tokenizer.tokens("준비")
    embedder = HashingEmbedder()
    results: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        from bot.app import build_components
        from bot.config import Settings

        data_dir = Path(tmp)
        seed = build_components(Settings(REGBOT_DATA_DIR=str(data_dir), REGBOT_LLM="offline"), embedder=embedder,
                                tokenizer=tokenizer)
        seed.ingestor().ingest([args.repo / "samples"])
        for api in args.api or ["anthropic", "openai"]:
            for fault in args.fault or FAULTS:
                rows = [await _run_fault(api, fault, data_dir, tokenizer, embedder) for _ in range(args.repeat)]
                results.setdefault(api, {})[fault] = _median_row(rows)
                print(f"{api:9} {fault:12} {results[api][fault]}", file=sys.stderr)
    print(json.dumps({"repo": str(args.repo), "repeat": args.repeat, "results": results}, ensure_ascii=False,
                     indent=2))


if __name__ == "__main__":
    asyncio.run(main())
