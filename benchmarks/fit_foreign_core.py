"""Long English and Vietnamese questions: the asking sentence, the weight of glossary words, the dense reading.

A foreign question that tells its story first ("My boss owes me 4 months of salary. … Can the government stop him
leaving Korea?") is read by the glossary word by word, so the story's everyday words (pay, boss, worker) become
broad Korean terms (임금, 사용자, 근로자) beside the specific ones. Seven knobs, each moved alone from the current
reading (every word of the glossary's Korean query alike, e5 on the question as asked):
- `story`: the weight of words read only outside the sentence that asks (its last with "?", else its last);
- `incidental`: the weight of words from `topic: false` entries (who is involved, a figure asked for);
- `breadth`: an entry giving n Korean words weighs n^-breadth each;
- `foreign_dense_query`: e5 reads the asking sentence, the mean of both vectors, each sentence as well (best
  cosine), or the words the glossary could not read as well;
- `single`: the weight of words read from a one-word phrase ("pay", "leave");
- `foreign_core_lexical_weight`: a BM25 ranking on the asking sentence's Korean words fused beside the main one;
- `foreign_rerank_core_weight`: the reranker's coverage of those words.
Every answerable single-turn item of the five foreign tuning sets is retrieved once per point (retrieval only:
Hit@5 and MRR@10 over distinct articles of the top 10); 5 folds stratified by set choose the point with the best
MRR@10 on the other folds and score it on the held-out fold.

Measured 2026-11-29 (260 items): every knob moved from the current reading lowered pooled MRR@10 (.4923); the
held-out folds chose the current point three times and scored .4847 (Hit@5 .6346 -> .6269). Nothing applied.

    REGBOT_DATA_DIR=… REGBOT_LLM=offline .venv/bin/python benchmarks/fit_foreign_core.py [--cache rows.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


SETS = ("foreign-dev", "heldout-foreign-1", "heldout-foreign-2", "heldout-foreign-3", "heldout-foreign-4")
# A point: (story, incidental, breadth, dense reading, single, core lexical, rerank core); CURRENT reads every word
# alike, embeds the question as asked and gives the asking sentence no ranking of its own.
KNOBS = ("story", "incidental", "breadth", "foreign_dense_query", "single", "foreign_core_lexical_weight",
         "foreign_rerank_core_weight")
CURRENT = (1.0, 1.0, 0.0, "question", 1.0, 0.0, 0.0)
GRID = {"story": (0.7, 0.5, 0.3, 1.5), "incidental": (0.7, 0.5, 0.3), "breadth": (0.5, 1.0),
        "foreign_dense_query": ("asking", "mean", "sentences", "unread"), "single": (0.7, 0.5, 0.3),
        "foreign_core_lexical_weight": (0.2, 0.4, 0.7, 1.0, 1.5), "foreign_rerank_core_weight": (0.2, 0.4, 0.7)}


def grid() -> list[tuple]:
    """The current point, then each knob moved alone (every one moved made the pool worse, so no joint grid)."""
    points = [CURRENT]
    for n, knob in enumerate(KNOBS):
        points += [(*CURRENT[:n], value, *CURRENT[n + 1:]) for value in GRID[knob]]
    return points


def record(points: list[tuple]) -> tuple[list[list], dict[str, list[tuple[float, float]]]]:
    """(set, language, words, has an asking sentence) per answerable item; per grid point each item's (hit5, mrr@10)."""
    from bot.app import build_components
    from bot.config import Settings
    from rag.eval import load_eval_file
    from rag.lang.detect import detect_language
    from rag.lang.glossary import TermWeights
    from rag.retrieval.rerank import heuristic_reranker

    components = build_components(Settings(REGBOT_LLM="offline"))
    retriever = components.retriever
    names = components.lookup.names()

    def same(gold: str, doc: str) -> bool:
        return (names.resolve(gold).doc or gold).replace(" ", "") == doc.replace(" ", "")

    items = [(name, item) for name in SETS for item in load_eval_file(REPO / "eval" / f"{name}.jsonl")
             if item.gold and len(item.turns) == 1]
    meta = []
    for name, item in items:
        question = item.turns[0].content
        analyzed = retriever.analyzer.analyze(question)
        meta.append([name, detect_language(question), len(question.split()), bool(analyzed.core_tokens)])
    base = retriever.config
    rows: dict[str, list[tuple[float, float]]] = {}
    glossary = retriever.analyzer.glossary
    for point in points:
        knobs = dict(zip(KNOBS, point, strict=True))
        glossary.weights = TermWeights(story=knobs["story"], incidental=knobs["incidental"],
                                       breadth=knobs["breadth"], single=knobs["single"])
        retriever.analyzer._cache.clear()
        config = base.model_copy(update={k: knobs[k] for k in KNOBS[3:] if k != "single"})
        for step in (retriever.query_embedder, retriever.dense, retriever.lexical, retriever.fusion):
            step.config = config
        retriever.reranker = heuristic_reranker(config, retriever.corpus.idf)
        out = []
        for _, item in items:
            hits = retriever.search_sync(item.turns[0].content, k=10)
            articles = list(dict.fromkeys((h.chunk.doc, h.chunk.article) for h in hits))
            rank = next((n for n, (doc, article) in enumerate(articles, 1)
                         if any(same(g.doc, doc) and g.article == article for g in item.gold)), None)
            out.append((float(rank is not None and rank <= 5), 1.0 / rank if rank else 0.0))
        rows[json.dumps(point)] = out
        print(json.dumps({"point": point, **summary(out, range(len(out)))}), file=sys.stderr, flush=True)
    return meta, rows


def summary(rows: list, chosen) -> dict:
    chosen = list(chosen)
    n = len(chosen) or 1
    return {"n": len(chosen), "hit@5": round(sum(rows[i][0] for i in chosen) / n, 4),
            "mrr@10": round(sum(rows[i][1] for i in chosen) / n, 4)}


def cross_validate(meta: list, rows: dict[str, list], current: str, k: int, seed: int) -> dict:
    fold = _folds(meta, k, seed)
    held: list = [None] * len(meta)
    chosen = []
    for f in range(k):
        train = [i for i in range(len(meta)) if fold[i] != f]
        best = max(rows, key=lambda p: (round(sum(rows[p][i][1] for i in train), 9),
                                        round(sum(rows[p][i][0] for i in train), 9), p == current))
        chosen.append(json.loads(best))
        for i in range(len(meta)):
            if fold[i] == f:
                held[i] = rows[best][i]
    everyone = range(len(meta))
    groups = {"all": list(everyone), **{s: [i for i in everyone if meta[i][0] == s] for s in SETS},
              **{lang: [i for i in everyone if meta[i][1] == lang] for lang in ("en", "vi")},
              "en over 15 words": [i for i in everyone if meta[i][1] == "en" and meta[i][2] > 15],
              "en 15 words or fewer": [i for i in everyone if meta[i][1] == "en" and meta[i][2] <= 15],
              "with an asking sentence": [i for i in everyone if meta[i][3]]}
    return {"chosen_per_fold": chosen,
            "groups": {g: {"current": summary(rows[current], m), "held_out": summary(held, m)}
                       for g, m in groups.items()}}


def _folds(meta: list, k: int, seed: int) -> list[int]:
    import random

    fold = [0] * len(meta)
    rng = random.Random(seed)
    for name in SETS:
        members = [i for i, m in enumerate(meta) if m[0] == name]
        rng.shuffle(members)
        for position, index in enumerate(members):
            fold[index] = position % k
    return fold


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="per-item rows: read when it exists, else written")
    parser.add_argument("--points", help="JSON list of [lexical, rerank, dense] points to record (default: the grid)")
    parser.add_argument("--every-cached", action="store_true", help="also cross-validate every point the cache holds")
    args = parser.parse_args(argv)
    current = json.dumps(CURRENT)
    data = json.loads(args.cache.read_text(encoding="utf-8")) if args.cache and args.cache.exists() else {}
    points = [tuple(p) for p in json.loads(args.points)] if args.points else grid()
    if args.every_cached:
        points = list(dict.fromkeys([*points, *(tuple(json.loads(p)) for p in data.get("rows", {}))]))
    meta, rows = data.get("meta", []), data.get("rows", {})
    missing = [p for p in points if json.dumps(p) not in rows]
    if missing:  # only the points the cache lacks are retrieved
        meta, new = record(missing)
        rows.update(new)
        if args.cache:
            args.cache.write_text(json.dumps({"meta": meta, "rows": rows}), encoding="utf-8")
    rows = {p: r for p, r in rows.items() if tuple(json.loads(p)) in points or p == json.dumps(CURRENT)}
    everyone = range(len(meta))
    full = max(rows, key=lambda p: (round(sum(r[1] for r in rows[p]), 9), round(sum(r[0] for r in rows[p]), 9),
                                    p == current))
    print(json.dumps({"fit_on_all": json.loads(full), "fit_on_all_figures": summary(rows[full], everyone),
                      **cross_validate(meta, rows, current, args.folds, args.seed)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
