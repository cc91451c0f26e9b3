"""Pipeline overhead and LLM calls per question, offline and on a zero-latency stand-in for the LLM. Prints JSON.

    .venv/bin/python benchmarks/pipeline.py [--eval FILE] [--corpus DIR] [--data-dir DIR] [--no-dense] [--repeat N]

Every question of the eval file (default ../shared/eval/dev.jsonl; skipped with a message when absent) runs
through the offline pipeline and through the LLM pipeline, whose provider is `InstantLlm` below: it answers each
stage's prompt at once, plausibly, from the prompt alone, behind the real `ResilientProvider` (so calls are counted
by the per-turn budget exactly as in production). Overhead is the answer's total time minus the time spent inside
the provider: retrieval, Kiwi, Chroma, prompt building, parsing, verification and event plumbing.

The corpus (default ../shared/corpus/ko-law) is ingested into `--data-dir` (a fresh temporary directory unless
given; ingest is incremental, so a kept directory makes later runs start fast).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bot.app import Components, build_components  # noqa: E402
from bot.config import Settings  # noqa: E402
from rag.eval import EvalItem, load_eval_file  # noqa: E402
from rag.llm import LlmRequest, LlmResponse, LlmStream, ResilientProvider  # noqa: E402
from rag.models import Chunk, Hit, Role  # noqa: E402
from rag.pipeline import AnswerPipeline, collect  # noqa: E402
from rag.retrieval.corpus import IndexedCorpus  # noqa: E402
from rag.retrieval.tokenizer import Tokenizer  # noqa: E402
from rag.stages.contracts import Strategy  # noqa: E402
from rag.stages.factory import build_stages  # noqa: E402
from rag.stages.followups import FOLLOWUP_PROMPT  # noqa: E402
from rag.stages.generator import FOLLOWUP_MARKER  # noqa: E402
from rag.stages.grader import GRADE_PROMPT, OfflineGrader  # noqa: E402
from rag.stages.planner import OfflineQueryPlanner  # noqa: E402
from rag.stages.rewriter import REWRITE_PROMPT  # noqa: E402
from rag.stages.understanding import UNDERSTAND_PROMPT  # noqa: E402
from rag.stages.verifier import VERIFY_PROMPT  # noqa: E402

SHARED = REPO.parent / "shared"
_SOURCE = re.compile(r"^\[(\d+)\] ([^\n]+)\n([^\n]*)", re.MULTILINE)
_CLAIM = re.compile(r"^(\d+)\. ", re.MULTILINE)
# A grading prompt's passage: "[n] label (title)" then the chunk text, up to the next passage or the fence's end.
_PASSAGE = re.compile(r"^\[(\d+)\] [^\n]*\n(.*?)(?=\n\n\[\d+\] |\n</조문>)", re.MULTILINE | re.DOTALL)


def fenced(tag: str, user: str) -> str:
    """The text a stage put between <tag> and </tag> (rag.llm.fence), or ""."""
    match = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.DOTALL)
    return match.group(1) if match else ""


class InstantLlm:
    """A zero-latency `LlmProvider` for the benchmark: plausible structured replies and quoted answers.

    Grades as the offline grader would on the passages in the prompt (so unanswerable questions fail and trigger
    the rewrite, as a model would), decomposes what the offline planner would, and answers by quoting the first
    line of the first two sources with [n] markers and two follow-ups. Quotes pass the verifier's offline check,
    so verification costs no call here: a real model's paraphrases sometimes will. `spent_s` is the time spent
    here, which the benchmark subtracts.
    """

    name = "instant"

    def __init__(self, tokenizer: Tokenizer, corpus: IndexedCorpus, grader: OfflineGrader) -> None:
        self.tokenizer = tokenizer
        self.corpus = corpus
        self.grader = grader
        self.planner = OfflineQueryPlanner(tokenizer)
        self.spent_s = 0.0

    @property
    def available(self) -> bool:
        return True

    async def complete(self, request: LlmRequest) -> LlmResponse:
        started = time.perf_counter()
        try:
            if request.json_schema is None:
                return LlmResponse(text=self._answer(request.messages[0].content))
            return LlmResponse(data=await self._structured(request.system, request.messages[0].content))
        finally:
            self.spent_s += time.perf_counter() - started

    def stream(self, request: LlmRequest) -> LlmStream:
        return LlmStream(self._deltas(request))

    async def _deltas(self, request: LlmRequest) -> AsyncIterator[str | LlmResponse]:
        started = time.perf_counter()
        if request.json_schema is not None:  # stages stream their structured calls too (one object at the end)
            data = await self._structured(request.system, request.messages[0].content)
            self.spent_s += time.perf_counter() - started
            yield LlmResponse(data=data)
            return
        text = self._answer(request.messages[0].content)
        self.spent_s += time.perf_counter() - started
        for at in range(0, len(text), 24):
            yield text[at : at + 24]
        yield LlmResponse(text=text)

    async def _structured(self, system: str, user: str) -> dict:
        # Stages append the untrusted-text rule to their prompt: recognise each by its own prompt.
        if system.startswith(UNDERSTAND_PROMPT):
            return await self._understand(user)
        if system.startswith(GRADE_PROMPT):
            return await self._grade(user)
        if system.startswith(REWRITE_PROMPT):
            missing = [line.lstrip("- ").strip() for line in fenced("찾지 못한 내용", user).splitlines()]
            return {"query": " ".join([fenced("질문", user), *filter(None, missing)])}
        if system.startswith(VERIFY_PROMPT):
            return {"verdicts": [{"claim": int(n), "supported": True} for n in _CLAIM.findall(fenced("주장", user))]}
        if system.startswith(FOLLOWUP_PROMPT):
            return {"questions": ["관련 절차도 알려줘", "예외가 있어?"]}
        raise ValueError("a prompt this benchmark does not know")

    async def _understand(self, user: str) -> dict:
        question = fenced("질문", user)
        previous = re.findall(r"^\[user\] (.*)$", fenced("대화 기록", user), re.MULTILINE)
        standalone = f"{previous[-1].rstrip('?.!~ ')} {question}" if previous else question
        plan = await self.planner.run(standalone)
        reply = {"standalone_question": standalone, "route": "search", "compound": False,
                 "search_queries": [standalone], "keywords": list(plan.keywords), "intent": standalone}
        if plan.strategy == Strategy.MULTI:
            reply.update(compound=True, sub_questions=list(plan.sub_questions),
                         search_queries=list(plan.search_queries[1:]))
        return reply

    async def _grade(self, user: str) -> dict:
        question = fenced("질문", user)
        passages = _PASSAGE.findall(user)
        hits = [Hit(chunk=chunk, score=1.0) for _, text in passages
                if (chunk := self._chunk(text)) is not None]
        grade = await self.grader.run(question, hits)
        return {"score": 90 if grade.passed else 30, "missing": list(grade.missing)[:5],
                "relevant": [int(n) for n, _ in passages]}

    def _chunk(self, passage_text: str) -> Chunk | None:
        return next((c for c in self.corpus.chunks if c.text.startswith(passage_text[:200])), None)

    @staticmethod
    def _answer(user: str) -> str:
        quotes = [f"{label}: {line.rstrip('. ')} [{n}]." for n, label, line in _SOURCE.findall(user)[:2]]
        return "\n".join(quotes) + f"\n{FOLLOWUP_MARKER}\n관련 절차도 알려줘\n예외가 있어?"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return round(ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))], 1)


def summary(rows: list[dict], *, with_llm: bool) -> dict:
    overhead = [r["overhead_ms"] for r in rows]
    out: dict = {"overhead_ms": {"p50": percentile(overhead, 0.5), "p95": percentile(overhead, 0.95),
                                 "mean": round(statistics.fmean(overhead), 1) if overhead else 0.0}}
    by_type: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_type[row["type"]].append(row)
    out["by_type"] = {}
    for kind, group in sorted(by_type.items()):
        times = [r["overhead_ms"] for r in group]
        entry = {"n": len(group), "overhead_ms_p50": percentile(times, 0.5), "overhead_ms_p95": percentile(times, 0.95)}
        if with_llm:
            calls = [r["llm_calls"] for r in group]
            entry.update(llm_calls_mean=round(statistics.fmean(calls), 2), llm_calls_max=max(calls))
        out["by_type"][kind] = entry
    if with_llm:
        calls = [r["llm_calls"] for r in rows]
        out["llm_calls"] = {"mean": round(statistics.fmean(calls), 2), "max": max(calls),
                            "distribution": dict(sorted(Counter(calls).items())),
                            "share_within_3": round(sum(c <= 3 for c in calls) / len(calls), 3)}
        out["routes"] = dict(Counter(r["route"] for r in rows))
    return out


async def run_mode(components: Components, items: list[EvalItem], *, llm: InstantLlm | None,
                   repeat: int) -> list[dict]:
    rows: list[dict] = []
    for _ in range(repeat):
        provider = ResilientProvider(llm) if llm is not None else None
        stages = build_stages(llm=provider, corpus=components.corpus, tokenizer=components.tokenizer,
                              lookup=components.lookup, analyzer=components.retriever.analyzer)
        pipeline = AnswerPipeline(stages=stages, retriever=components.retriever)
        for item in items:
            history = tuple(item.turns[:-1])
            if llm is not None:
                llm.spent_s = 0.0
            answer, _ = await collect(pipeline, item.turns[-1].content, history=history, turn_id=item.id)
            if answer is None:
                rows.append({"id": item.id, "type": item.type, "route": "error", "overhead_ms": 0.0,
                             "llm_calls": 0})
                continue
            llm_ms = llm.spent_s * 1000 if llm is not None else 0.0
            rows.append({"id": item.id, "type": item.type, "route": answer.route.value,
                         "overhead_ms": round(answer.timings_ms.get("total", 0.0) - llm_ms, 2),
                         "llm_calls": answer.llm_calls})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval", type=Path, default=SHARED / "eval" / "dev.jsonl")
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus" / "ko-law")
    parser.add_argument("--data-dir", type=Path, help="index directory to (re)use; a temporary one by default")
    parser.add_argument("--no-dense", action="store_true", help="lexical retrieval only (no embedding at ingest)")
    parser.add_argument("--repeat", type=int, default=1, help="run the eval set this many times per mode")
    args = parser.parse_args()
    if not args.eval.is_file() or not args.corpus.is_dir():
        missing = args.eval if not args.eval.is_file() else args.corpus
        print(json.dumps({"benchmark": "pipeline", "skipped": f"not found: {missing}"}, ensure_ascii=False))
        return 0
    items = [i for i in load_eval_file(args.eval) if i.turns and i.turns[-1].role == Role.USER]
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.data_dir or Path(tmp)
        settings = Settings(REGBOT_DATA_DIR=str(data_dir), REGBOT_LLM="offline")
        components = build_components(settings, dense=not args.no_dense)
        started = time.perf_counter()
        report = components.ingestor().ingest([args.corpus])
        ingest_s = time.perf_counter() - started
        components.corpus.refresh()
        # Warm Kiwi, Chroma and the embedder before anything is timed.
        asyncio.run(run_mode(components, items[:3], llm=None, repeat=1))
        offline = asyncio.run(run_mode(components, items, llm=None, repeat=args.repeat))
        instant = InstantLlm(components.tokenizer, components.corpus,
                             OfflineGrader(components.corpus, components.tokenizer,
                                           analyzer=components.retriever.analyzer))
        with_llm = asyncio.run(run_mode(components, items, llm=instant, repeat=args.repeat))
    result = {
        "benchmark": "pipeline",
        "eval": str(args.eval),
        "corpus": str(args.corpus),
        "chunks": len(components.corpus.chunks),
        "ingest_s": round(ingest_s, 1),
        "ingest_failed": len(report.failed),
        "dense": components.dense is not None,
        "questions": len(items),
        "repeat": args.repeat,
        "modes": {"offline": summary(offline, with_llm=False), "llm_instant": summary(with_llm, with_llm=True)},
    }
    print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
