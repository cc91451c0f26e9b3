"""Answer latency with turn records on vs off (target: at most 2 ms added at p95). Prints JSON.

    .venv/bin/python benchmarks/records.py [--blocks 60] [--block 10] [--concurrency 1] [--redis URL]

The bundled samples are ingested (lexical retrieval only; the records hook does not depend on the index) and the
offline pipeline answers a mix of questions (answered, refused, small talk) through `BotService`, exactly as the
server runs it, without a recorder and with one writing to SQLite (or to Redis with `--redis`). The two modes
alternate in short blocks of turns, so a loaded machine slows both alike; latency is from the call to the `done`
event, and each mode's p50/p95 pools all its blocks. The run is repeated `--runs` times and the medians reported.
`hook_us` is the cost of the call the service makes at the end of a turn (the rest runs in the background).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bot.app import Components, build_components  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.report.recorder import TurnRecorder  # noqa: E402
from bot.report.records import RedisRecordStore, SqliteRecordStore  # noqa: E402
from bot.report.report import percentile  # noqa: E402
from bot.report.themes import TopicNouns  # noqa: E402
from bot.service.limits import LimitsConfig  # noqa: E402
from bot.service.metrics import Metrics  # noqa: E402
from bot.service.service import BotService  # noqa: E402
from bot.state import StateStores  # noqa: E402
from rag.models import Answer, Route, Turn  # noqa: E402

QUESTIONS = [
    "연차는 며칠이야?", "출장 일비는 얼마야?", "경조휴가 며칠?", "회사 주차장 요금은 얼마예요?", "구내식당 메뉴 알려줘",
    "안녕하세요", "입사 1년 지나면 연차 며칠 받아?", "통근버스 노선이 어떻게 돼?", "야근 수당은 어떻게 계산해?",
    "병가는 며칠까지 쓸 수 있어?",
]
LIMITS = LimitsConfig(user_burst=100_000, workspace_burst=100_000, max_active_answers=64, max_waiting_answers=512)


def build(data_dir: Path) -> Components:
    components = build_components(Settings(REGBOT_DATA_DIR=str(data_dir), REGBOT_LLM="offline"), dense=False)
    report = components.ingestor().ingest([REPO / "samples"])
    if report.failed:
        raise SystemExit(f"ingest failed: {report.failed}")
    components.corpus.refresh()
    return components


async def timed_turn(service: BotService, turn: Turn) -> float:
    started = time.perf_counter()
    async for event in service.answer(turn):
        if event.kind in ("done", "error"):
            elapsed = time.perf_counter() - started
    return elapsed * 1000


async def run_mode(components: Components, recorder: TurnRecorder | None, *, turns: int, concurrency: int,
                   tag: str) -> list[float]:
    service = BotService(pipeline=components.pipeline, store=StateStores.in_process(), metrics=Metrics(), limits=LIMITS,
                         recorder=recorder)
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(i: int) -> None:
        turn = Turn(turn_id=f"{tag}-{i}", text=QUESTIONS[i % len(QUESTIONS)], user=f"U{i % 50}",
                    conversation_key=f"slack:T1:C{i % 7}:{tag}.{i}")
        async with gate:
            latencies.append(await timed_turn(service, turn))

    await asyncio.gather(*(one(i) for i in range(turns)))
    return latencies


async def hook_cost_us(recorder: TurnRecorder, calls: int = 5_000) -> float:
    answer = Answer(text="답변", route=Route.SEARCH, llm_calls=1)
    turn = Turn(turn_id="hook", text=QUESTIONS[0], user="U1", conversation_key="slack:T1:C1:1.0")
    started = time.perf_counter()
    for _ in range(calls):
        recorder.turn_ended(turn, platform="slack", outcome="answered", answer=answer, latency_s=0.1, at=time.time())
    elapsed = time.perf_counter() - started
    await recorder.flush()
    return elapsed / calls * 1e6


async def write_ms(recorder: TurnRecorder, records: int = 300) -> list[float]:
    """Wall time from the hook to the record being in the store, one record at a time on an idle loop: what the
    background work costs per turn, were it all on an answer's path (it is not)."""
    answer = Answer(text="답변", route=Route.SEARCH, grounded=False, llm_calls=1)
    times: list[float] = []
    for i in range(records):
        turn = Turn(turn_id=f"write-{i}", text=QUESTIONS[3], user="U1", conversation_key="slack:T1:C1:1.0")
        started = time.perf_counter()
        recorder.turn_ended(turn, platform="slack", outcome="answered", answer=answer, latency_s=0.1, at=time.time())
        await recorder.flush()
        times.append((time.perf_counter() - started) * 1000)
    return times


def summary(latencies: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(latencies, 0.5), 2), "p95_ms": round(percentile(latencies, 0.95), 2),
            "mean_ms": round(statistics.fmean(latencies), 2), "n": len(latencies)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=60, help="blocks per mode (alternating)")
    parser.add_argument("--block", type=int, default=10, help="turns per block")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--redis", default="", help="write records to this Redis instead of SQLite")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="regbot-records-bench-") as tmp:
        components = build(Path(tmp) / "index")
        topic_nouns = TopicNouns.for_tokenizer(components.tokenizer)

        def recorder(linger_s: float = 0.05) -> TurnRecorder:
            store = RedisRecordStore.from_url(args.redis) if args.redis else SqliteRecordStore(
                Path(tmp) / "records.sqlite")
            return TurnRecorder(store, topic_nouns=topic_nouns, linger_s=linger_s)

        await run_mode(components, None, turns=20, concurrency=args.concurrency, tag="warm")  # Kiwi, caches
        runs = []
        for run in range(args.runs):
            off_all: list[float] = []
            on_all: list[float] = []
            cpu_s = {"off": 0.0, "on": 0.0}  # process CPU time: what records cost, whatever the machine's load
            rec = recorder()  # one recorder for the run, as the server keeps one
            for b in range(2 * args.blocks):
                mode_on = (b + run) % 2 == 1
                cpu_started = time.process_time()
                latencies = await run_mode(components, rec if mode_on else None, turns=args.block,
                                           concurrency=args.concurrency, tag=f"run{run}b{b}")
                if mode_on:
                    await rec.flush()  # the block's background work is charged to the block
                cpu_s["on" if mode_on else "off"] += time.process_time() - cpu_started
                (on_all if mode_on else off_all).extend(latencies)
            await rec.close()
            written = rec.written
            off, on = summary(off_all), summary(on_all)
            turns = args.blocks * args.block
            runs.append({"records_off": off, "records_on": on, "p95_added_ms": round(on["p95_ms"] - off["p95_ms"], 2),
                         "p50_added_ms": round(on["p50_ms"] - off["p50_ms"], 2), "records_written": written,
                         "cpu_ms_per_turn_off": round(cpu_s["off"] / turns * 1000, 3),
                         "cpu_ms_per_turn_on": round(cpu_s["on"] / turns * 1000, 3),
                         "cpu_ms_added_per_turn": round((cpu_s["on"] - cpu_s["off"]) / turns * 1000, 3)})
        hook_recorder = recorder(linger_s=0.0)  # the write's own cost, without the batching wait
        hook_us = await hook_cost_us(hook_recorder)
        writes = await write_ms(hook_recorder)  # a refused question: Kiwi nouns, hashing, one write
        await hook_recorder.close()

    def median(key: str, sub: str | None = None) -> float:
        return round(statistics.median(r[key][sub] if sub else r[key] for r in runs), 2)

    print(json.dumps({
        "store": "redis" if args.redis else "sqlite",
        "runs": args.runs, "turns_per_mode_per_run": args.blocks * args.block, "block": args.block,
        "concurrency": args.concurrency,
        "median_of_runs": {
            "off_p50_ms": median("records_off", "p50_ms"), "off_p95_ms": median("records_off", "p95_ms"),
            "on_p50_ms": median("records_on", "p50_ms"), "on_p95_ms": median("records_on", "p95_ms"),
            "p50_added_ms": median("p50_added_ms"), "p95_added_ms": median("p95_added_ms"),
            "cpu_ms_per_turn_off": median("cpu_ms_per_turn_off"), "cpu_ms_per_turn_on": median("cpu_ms_per_turn_on"),
            "cpu_ms_added_per_turn": median("cpu_ms_added_per_turn"),
        },
        "runs_detail": runs,
        "hook_us_per_turn": round(hook_us, 2),
        "background_write_ms_per_record": {"p50": round(percentile(writes, 0.5), 2),
                                           "p95": round(percentile(writes, 0.95), 2)},
        "target_p95_added_ms": 2.0,
    }, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
