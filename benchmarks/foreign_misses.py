"""Where an English or Vietnamese question's article is lost: in the lexical ranking (the glossary's Korean words),
the dense ranking (multilingual e5 on the question as asked), or only in their fusion.

For each answerable single-turn item of the pooled foreign tuning sets, the article's rank (distinct articles, top
`--depth` chunks) in each retriever and after the whole retrieval, counted by bucket, for long questions (over
`--words` words) and short ones. A miss neither retriever ranks is a vocabulary gap (the glossary reads no word of
the article and e5 does not place it); one the dense side ranks high but the fusion does not is a weighting matter.

    REGBOT_DATA_DIR=… REGBOT_LLM=offline .venv/bin/python benchmarks/foreign_misses.py [--words 15]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SETS = ("foreign-dev", "heldout-foreign-1", "heldout-foreign-2", "heldout-foreign-3", "heldout-foreign-4")


def bucket(rank: int | None) -> str:
    if rank is None:
        return "absent"
    for limit, label in ((5, "top5"), (10, "6-10"), (20, "11-20")):
        if rank <= limit:
            return label
    return "21+"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=15, help="a question over this many words is long")
    parser.add_argument("--depth", type=int, default=50, help="chunks read from each ranking")
    args = parser.parse_args(argv)
    from bot.app import build_components
    from bot.config import Settings
    from rag.eval import load_eval_file
    from rag.models import Scope

    components = build_components(Settings(REGBOT_LLM="offline"))
    retriever, names = components.retriever, components.lookup.names()

    def rank(chunk_ids, gold) -> int | None:
        chunks = [retriever.corpus.get(cid) for cid in chunk_ids]
        articles = list(dict.fromkeys((c.doc, c.article) for c in chunks if c is not None))
        return next((n for n, (doc, article) in enumerate(articles, 1) for g in gold
                     if (names.resolve(g.doc).doc or g.doc).replace(" ", "") == doc.replace(" ", "")
                     and g.article == article), None)

    counts: dict[str, collections.Counter] = {"long": collections.Counter(), "short": collections.Counter()}
    for name in SETS:
        for item in load_eval_file(REPO / "eval" / f"{name}.jsonl"):
            if not item.gold or len(item.turns) != 1:
                continue
            question = item.turns[0].content
            analyzed = retriever.analyzer.analyze(question)
            mask = retriever.scope_filter.run(analyzed, Scope())
            vector = retriever.query_embedder.run(analyzed)
            mask = retriever.domain_filter.run(mask, retriever.domains.run(analyzed, vector))
            lexical = retriever.lexical.run(analyzed, mask)
            dense = retriever.dense.run(analyzed, vector, Scope(), mask)
            final = retriever.search_sync(question, k=args.depth)
            key = (bucket(rank([h.chunk.chunk_id for h in final], item.gold)),
                   bucket(rank([c for c, _ in lexical.items], item.gold)),
                   bucket(rank([c for c, _ in dense.items], item.gold) if dense else None))
            counts["long" if len(question.split()) > args.words else "short"][" / ".join(key)] += 1
    print(json.dumps({"columns": "final / lexical / dense (article rank buckets)",
                      **{length: dict(c.most_common()) for length, c in counts.items()}}, indent=1,
                     ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
