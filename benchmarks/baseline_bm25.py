"""The floor regbot must clear: Kiwi-BM25 over whole articles, the last user turn as the query.

Every article (a regulation's 조, all its parts joined; a chunk without an article label stands alone) is one BM25
document of the project's stored Kiwi tokens, body and title together. The query is the last user turn alone, as
a person would type it into a search box (a follow-up is searched without its history). Scored as `regbot eval`
scores: gold matched by (document through aliases, article or 편/장), Hit@1/5 and MRR@10 over the first ten
distinct articles, per set and per question type.

    REGBOT_DATA_DIR=... .venv/bin/python benchmarks/baseline_bm25.py FILE.jsonl... [--compare EVAL.json ...]

With `--compare`, each eval file's `regbot eval --json` output (same order as the files) is read and a table of
regbot − BM25 per type is printed to stderr; a negative MRR there is a type where regbot ranks below the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import bm25s  # noqa: E402
import numpy as np  # noqa: E402

from rag.eval import EvalItem, GoldRef, load_eval_file  # noqa: E402
from rag.knowledge.store import ChunkStore  # noqa: E402
from rag.lang.reference import is_division_label  # noqa: E402
from rag.retrieval.corpus import REPEALED, split_stored_tokens  # noqa: E402
from rag.retrieval.names import DocumentNames, load_aliases  # noqa: E402
from rag.retrieval.tokenizer import KiwiTokenizer  # noqa: E402

K = 10
Article = tuple[str, str, str]  # (doc, article, chapter)


class ArticleBm25:
    """BM25 (k1 1.2, b 0.75) over whole articles of the stored Kiwi tokens."""

    def __init__(self, data_dir: Path) -> None:
        chunks, stored = ChunkStore(data_dir / "index.sqlite").load()
        grouped: dict[tuple[str, str, str], list[str]] = {}
        chapters: dict[tuple[str, str, str], str] = {}
        for chunk, tokens in zip(chunks, stored, strict=True):
            if chunk.deleted or chunk.status == REPEALED:
                continue
            split = split_stored_tokens(tokens)
            body, title = split if split is not None else (list(tokens), [])
            key = (chunk.doc, chunk.article or chunk.chunk_id, chunk.collection)
            grouped.setdefault(key, []).extend([*body, *title])
            chapters.setdefault(key, chunk.chapter)
        self.keys = list(grouped)
        self.articles: list[Article] = [(d, a, chapters[(d, a, c)]) for d, a, c in self.keys]
        self.index = bm25s.BM25(k1=1.2, b=0.75)
        self.index.index([grouped[k] or ["∅"] for k in self.keys], show_progress=False)
        self.names = DocumentNames(sorted({k[0] for k in self.keys}), aliases=load_aliases())
        self.tokenizer = KiwiTokenizer()

    def search(self, query: str, k: int = K) -> list[Article]:
        tokens = [t for t in dict.fromkeys(self.tokenizer.tokens(query)) if t in self.index.vocab_dict]
        if not tokens:
            return []
        scores = self.index.get_scores(tokens)
        top = np.argsort(-scores, kind="stable")[:k]
        found: list[Article] = []
        for i in top:
            if scores[i] > 0 and self.articles[i][:2] not in [a[:2] for a in found]:
                found.append(self.articles[i])
        return found

    def same_doc(self, gold: str, doc: str) -> bool:
        resolved = self.names.resolve(gold)
        return (resolved.doc or gold).replace(" ", "") == doc.replace(" ", "")

    def matches(self, gold: GoldRef, ref: Article) -> bool:
        """`rag.eval.Evaluator.matches`, on an (doc, article, chapter) triple."""
        if not self.same_doc(gold.doc, ref[0]):
            return False
        if gold.article == "*":
            return True
        if is_division_label(gold.article):
            return ref[2] == gold.article or ref[1] == gold.article
        return ref[1] == gold.article

    def first_rank(self, item: EvalItem) -> int | None:
        refs = self.search(item.turns[-1].content)
        ranks = [next((i for i, r in enumerate(refs, 1) if self.matches(g, r)), None) for g in item.gold]
        found = [r for r in ranks if r is not None]
        return min(found) if found else None


def figures(ranks: Sequence[int | None]) -> dict[str, float | int]:
    n = len(ranks)
    if not n:
        return {"items": 0}
    return {"items": n,
            "hit@1": round(sum(1 for r in ranks if r == 1) / n, 4),
            "hit@5": round(sum(1 for r in ranks if r is not None and r <= 5) / n, 4),
            "mrr@10": round(sum(1 / r for r in ranks if r) / n, 4)}


def evaluate(bm25: ArticleBm25, items: Sequence[EvalItem]) -> dict:
    by_type: dict[str, list[int | None]] = defaultdict(list)
    rows = []
    for item in items:
        if not item.gold:
            continue
        rank = bm25.first_rank(item)
        by_type[item.type].append(rank)
        rows.append({"id": item.id, "type": item.type, "rank": rank})
    return {"overall": figures([r["rank"] for r in rows]),
            "by_type": {t: figures(v) for t, v in sorted(by_type.items())}, "items": rows}


def compare(name: str, baseline: dict, eval_json: dict) -> list[str]:
    """Lines of regbot vs BM25 per type (MRR@10 and Hit@5); `!` marks a type where regbot is below."""
    lines = [f"{name}: type                 n   bm25 mrr  regbot mrr   bm25 h@5  regbot h@5"]
    rows = [("overall", baseline["overall"], eval_json["metrics"])]
    rows += [(t, b, eval_json["by_type"].get(t, {})) for t, b in baseline["by_type"].items()]
    for label, ours_b, ours_r in rows:
        mrr_b, mrr_r = ours_b.get("mrr@10"), ours_r.get("mrr@10")
        below = mrr_r is not None and mrr_b is not None and mrr_r < mrr_b - 1e-9
        lines.append(f"  {'!' if below else ' '} {label:20s} {ours_b['items']:4d}   {mrr_b!s:8s} {mrr_r!s:11s}"
                     f"  {ours_b.get('hit@5')!s:9s} {ours_r.get('hit@5')!s}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("REGBOT_DATA_DIR", ".regbot")))
    parser.add_argument("--compare", type=Path, nargs="*", default=[],
                        help="`regbot eval --json` outputs, one per eval file, in the same order")
    args = parser.parse_args()
    bm25 = ArticleBm25(args.data_dir)
    report = {"benchmark": "baseline_bm25_article", "data_dir": str(args.data_dir), "articles": len(bm25.keys),
              "sets": {}}
    for n, path in enumerate(args.files):
        result = evaluate(bm25, load_eval_file(path))
        report["sets"][path.name] = result
        o = result["overall"]
        print(f"{path.name:22s} bm25-article n={o['items']} hit@1={o.get('hit@1')} hit@5={o.get('hit@5')} "
              f"mrr@10={o.get('mrr@10')}", file=sys.stderr)
        if n < len(args.compare):
            ours = json.loads(args.compare[n].read_text(encoding="utf-8"))
            print("\n".join(compare(path.name, result, ours)), file=sys.stderr)
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
