"""Fit the ranking's weights, priors and reranker factors on pooled eval sets with k-fold cross-validation.

Two steps, so fitting never re-runs retrieval:

  features  runs each item's query once through the retriever's steps (folding a follow-up as the pipeline does)
            and caches, per candidate, what every fitted parameter acts on: the normalised lexical and dense
            scores, the prior flags (`components.PRIOR_FLAGS`), the reranker's feature columns (`rerank.FEATURES`),
            its article and whether that article is gold;
  fit       coordinate ascent on the cached features (numpy only), objective MRR@10 over distinct articles
            with real inquiries weighing as much as all written questions; `--folds` folds, stratified by set:
            each fold is ranked with the values fitted on the others, and those held-out figures are the ones
            reported. A parameter whose neutral value (weight 0, factor 1) does about as well in cross-validation
            (within `KEEP_MARGIN`) is set neutral. The values fitted on all items are
            written with their provenance to `rag/data/ranking_fit.yaml` as a candidate; `--apply` makes them
            the defaults `RetrievalConfig` reads (check the whole pipeline with `regbot eval` first: the
            answerability judge reads the reranker's score mix).

    REGBOT_DATA_DIR=... .venv/bin/python benchmarks/ranking_fit.py features FILE.jsonl... --cache /tmp/rank.pkl
    .venv/bin/python benchmarks/ranking_fit.py fit --cache /tmp/rank.pkl [--write]

The cached ranking is the single-query retrieval ranking (no compound planning, no sanction/purpose links); the
pipeline's own figures come from `regbot eval` after the fit.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import pickle
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from benchmarks.folds import stratified_folds  # noqa: E402
from rag.retrieval.components import PRIOR_FLAGS  # noqa: E402
from rag.retrieval.config import RANKING_FIT, RetrievalConfig  # noqa: E402
from rag.retrieval.rerank import FEATURES  # noqa: E402

CONTEXT_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
RERANK_CONTEXT_GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
# Fitted parameter → (grid, neutral value, how it acts: "dense", "prior:<flag>", "feature:<column>", "addenda").
PARAMETERS: dict[str, tuple[tuple[float, ...], float, str]] = {
    "dense_weight": ((0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0), 0.0, "signal:dense"),
    "plain_lexical_weight": ((0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0), 0.0, "signal:plain_lexical"),
    "core_lexical_weight": ((0.0, 0.1, 0.2, 0.3, 0.5, 0.75), 0.0, "signal:core_lexical"),
    "out_of_domain_factor": ((0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), 1.0, "prior:outside_named_domain"),
    "vector_domain_factor": ((0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0), 1.0, "prior:outside_vector_domain"),
    "named_document_boost": ((1.0, 1.1, 1.2, 1.3, 1.5, 1.8, 2.2), 1.0, "prior:named_document"),
    # Below 1: a follow-up may ask about another article than the one the previous reply cited.
    "cited_article_boost": ((0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.35, 1.5, 1.8, 2.2, 3.0), 1.0,
                            "prior:cited_article"),
    "cited_document_boost": ((1.0, 1.05, 1.1, 1.2, 1.35, 1.5), 1.0, "prior:cited_document"),
    "subordinate_factor": ((0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1), 1.0, "prior:subordinate"),
    "rerank_title_weight": ((0.0, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0), 0.0, "feature:title"),
    "rerank_body_weight": ((0.0, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0), 0.0, "feature:body"),
    "rerank_paragraph_weight": ((0.0, 0.1, 0.2, 0.3, 0.5, 0.75), 0.0, "feature:paragraph"),
    "rerank_quantity_weight": ((0.0, 0.1, 0.2, 0.3, 0.5), 0.0, "feature:quantity"),
    "rerank_core_weight": ((0.0, 0.1, 0.2, 0.35, 0.5, 0.75), 0.0, "feature:core"),
    "rerank_defines_weight": ((0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2), 0.0, "feature:defines"),
    "rerank_addenda_penalty": ((0.2, 0.35, 0.5, 0.7, 1.0), 1.0, "addenda"),
    # A follow-up's earlier-turn words: in the lexical query and in the reranker's coverage. Both act before the
    # cached columns, so `features` records a follow-up's lexical scores and reranker rows at each grid value.
    "context_weight": (CONTEXT_GRID, 0.0, "context:lexical"),
    "rerank_context_weight": (RERANK_CONTEXT_GRID, 0.0, "context:rerank"),
}
K = 10
# A parameter stays only when cross-validation without it is worse by more than this (set-mean MRR@10): about one
# item's rank 1 → 2 in a 40-item set, over the 14 sets pooled.
KEEP_MARGIN = 0.002


# --- features ---------------------------------------------------------------------------------------------------

def extract(data_dir: Path, files: list[Path], *, fold: str = "cues", after_unrelated: bool = False) -> list[dict]:
    """One record per answerable, non-lookup item: its candidates' cached features. `fold` decides whether a
    question with history is folded as the pipeline does (`cues`), always or never; `after_unrelated` takes the
    single-turn items instead, each asked after the set's previous one (`after_unrelated_items`)."""
    from bot.app import build_components
    from bot.config import Settings
    from rag.eval import load_eval_file
    from rag.models import Scope
    from rag.retrieval.fusion import distribution_scores, normalized_scores
    from rag.retrieval.query import ConversationFolder

    sys.path.insert(0, str(REPO / "benchmarks"))
    from baseline_bm25 import ArticleBm25

    settings = Settings(REGBOT_DATA_DIR=str(data_dir), REGBOT_LLM="offline")
    components = build_components(settings)
    retriever = components.retriever
    corpus, config = retriever.corpus, retriever.config
    folder = ConversationFolder(retriever.analyzer.tokenizer, max_turns=settings.history_turns)
    lookup = components.lookup
    matcher = ArticleBm25.__new__(ArticleBm25)  # only its gold matching, with the index's names
    matcher.names = lookup.names()
    reranker = retriever.reranker
    if fold != "cues":
        folder.leans_on_history = lambda question: fold == "always"  # type: ignore[method-assign]
    records = []
    for path in files:
        items = load_eval_file(path)
        for item in after_unrelated_items(items) if after_unrelated else items:
            question = item.turns[-1].content
            if not item.gold or lookup.parse(question) is not None:
                continue
            folded = folder.fold(question, item.turns[:-1])
            analyzed = retriever.analyzer.analyze(folded.text, context=folded.context)
            mask = retriever.scope_filter.run(analyzed, Scope())
            vector = retriever.query_embedder.run(analyzed)
            domains = retriever.domains.run(analyzed, vector)
            mask = retriever.domain_filter.run(mask, domains)
            lexical = retriever.lexical.run(analyzed, mask)
            by_context = None
            if folded.context:  # the lexical ranking at each context weight; the candidates are their union
                by_context = [normalized_scores(retriever.lexical._search("lexical", analyzed.weighted_tokens(
                    expansion_weight=config.expansion_weight, context_weight=w), mask).items, floor=0.0)
                    for w in CONTEXT_GRID]
            dense = retriever.dense.run(analyzed, vector, Scope(), mask)
            lex = normalized_scores(lexical.items, floor=0.0)
            den = distribution_scores(dense.items) if dense is not None else {}
            signals = {"dense": den}
            for name, tokens in (("plain_lexical", analyzed.tokens), ("core_lexical", analyzed.core_tokens)):
                found = retriever.lexical._search(name, dict.fromkeys(tokens, 1.0), mask) if tokens else None
                signals[name] = normalized_scores(found.items, floor=0.0) if found else {}
            extra = [i for v in by_context or () for i in v]
            ids = [i for i in dict.fromkeys([*lex, *(i for v in signals.values() for i in v), *extra])
                   if i in corpus.position]
            if not ids:
                continue
            from rag.models import Hit

            hits = [Hit(chunk=corpus.get(i), score=1.0) for i in ids]
            rows, stub = reranker.features(analyzed, hits)
            rows_by_context = None
            if folded.context:
                today = reranker.context_weight
                rows_by_context = []
                for w in RERANK_CONTEXT_GRID:
                    reranker.context_weight = w
                    rows_by_context.append(reranker.features(analyzed, hits)[0])
                reranker.context_weight = today
            articles: dict[tuple[str, str], int] = {}
            article = [articles.setdefault((h.chunk.doc, h.chunk.article or h.chunk.chunk_id), len(articles))
                       for h in hits]
            gold = [any(matcher.matches(g, (h.chunk.doc, h.chunk.article, h.chunk.chapter)) for g in item.gold)
                    for h in hits]
            records.append({
                "id": item.id, "set": path.name, "type": item.type,
                "lexical": np.array([lex.get(i, 0.0) for i in ids]), "ids": ids,
                "signals": {name: np.array([v.get(i, 0.0) for i in ids]) for name, v in signals.items()},
                "priors": retriever.priors.flags(ids, domains), "features": rows, "stub": stub,
                "article": np.array(article), "gold": np.array(gold), "followup": bool(folded.context),
                # what the fold decision reads (benchmarks/fold_fit.py)
                "history": len(item.turns) > 1, "points_back": folder.points_back(question),
                "topic_nouns": folder.topic_noun_count(question),
                "lexical_by_context": None if by_context is None else
                np.array([[v.get(i, 0.0) for i in ids] for v in by_context]),
                "features_by_context": None if rows_by_context is None else np.array(rows_by_context),
            })
    log(f"features: {len(records)} items, rerank depth {config.rerank_depth}")
    return records


def after_unrelated_items(items: list) -> list:
    """Standalone questions asked in a conversation: each answerable single-turn item after the set's previous one
    (its question, then a reply quoting that item's evidence and citing its first gold article, as the bot's
    reply does). What folding the conversation costs a question that does not lean on it."""
    from benchmarks.in_thread import previous_reply
    from rag.models import Message, Role

    single = [i for i in items if len(i.turns) == 1 and i.gold and i.evidence]
    out = []
    for before, item in itertools.pairwise(single):
        turns = [before.turns[0], Message(role=Role.ASSISTANT, content=previous_reply(before)),
                 item.turns[0]]
        out.append(item.model_copy(update={"turns": turns, "type": f"{item.type}+after"}))
    return out


# --- scoring ----------------------------------------------------------------------------------------------------

class Pool:
    """The cached records as padded arrays (items × candidates)."""

    def __init__(self, records: list[dict], depth: int) -> None:
        self.records = records
        self.depth = depth
        n, c = len(records), max(len(r["lexical"]) for r in records)
        self.valid = np.zeros((n, c), dtype=bool)
        self.lexical = np.zeros((n, c))
        self.signals = {name: np.zeros((n, c)) for name in records[0]["signals"]}
        self.priors = np.zeros((n, c, len(PRIOR_FLAGS)), dtype=bool)
        self.features = np.zeros((n, c, len(FEATURES)))
        self.stub = np.zeros((n, c), dtype=bool)
        self.article = np.zeros((n, c), dtype=int)
        self.gold = np.zeros((n, c), dtype=bool)
        for i, r in enumerate(records):
            m = len(r["lexical"])
            self.valid[i, :m] = True
            self.lexical[i, :m] = r["lexical"]
            for name, values in r["signals"].items():
                self.signals[name][i, :m] = values
            self.priors[i, :m], self.features[i, :m] = r["priors"], r["features"]
            self.stub[i, :m], self.article[i, :m], self.gold[i, :m] = r["stub"], r["article"], r["gold"]
        # Per context grid value; an item with no earlier turns has the same columns at every value.
        self.lexical_by_context = np.repeat(self.lexical[:, None, :], len(CONTEXT_GRID), axis=1)
        self.features_by_context = np.repeat(self.features[:, None], len(RERANK_CONTEXT_GRID), axis=1)
        for i, r in enumerate(records):
            m = len(r["lexical"])
            if r.get("lexical_by_context") is not None:
                self.lexical_by_context[i, :, :m] = r["lexical_by_context"]
                self.features_by_context[i, :, :m] = r["features_by_context"]
        self.articles = int(self.article.max()) + 1

    def ranks(self, params: dict[str, float], rows: np.ndarray | None = None,
              factor: np.ndarray | None = None) -> np.ndarray:
        """Rank (1-based, among distinct articles) of the best gold article per item; 0 when gold is absent.
        `factor` (items × candidates) multiplies the fused scores after the priors."""
        sel = slice(None) if rows is None else rows
        value = self.values(params, sel, factor)
        n = value.shape[0]
        best = np.full((n, self.articles), -np.inf)
        np.maximum.at(best, (np.arange(n)[:, None].repeat(value.shape[1], 1), self.article[sel]), value)
        gold_best = np.where(self.gold[sel], value, -np.inf).max(axis=1)
        rank = 1 + (best > gold_best[:, None]).sum(axis=1)
        return np.where(np.isfinite(gold_best), rank, 0)

    def values(self, params: dict[str, float], sel: slice | np.ndarray, factor: np.ndarray | None = None) \
            -> np.ndarray:
        """Each candidate's final score (items × candidates; -inf where there is none)."""
        valid, lexical = self.valid[sel], self.lexical[sel]
        if "context_weight" in params:
            lexical = self.lexical_by_context[sel, CONTEXT_GRID.index(params["context_weight"])]
        factors = np.ones(len(PRIOR_FLAGS))
        weights = np.zeros(len(FEATURES))
        weights[0] = 1.0
        for name, value in params.items():
            kind = PARAMETERS[name][2]
            if kind.startswith("prior:"):
                factors[PRIOR_FLAGS.index(kind[6:])] = value
            elif kind.startswith("feature:"):
                weights[FEATURES.index(kind[8:])] = value
        fused = lexical.copy()
        for name, value in params.items():
            kind = PARAMETERS[name][2]
            if kind.startswith("signal:") and value:
                fused = fused + value * self.signals[kind[7:]][sel]
        fused = fused * np.where(self.priors[sel], factors, 1.0).prod(axis=2)
        if factor is not None:
            fused = fused * factor[sel]
        fused = np.where(valid, fused, -np.inf)
        order = np.argsort(-fused, axis=1, kind="stable")
        position = np.empty_like(order)
        np.put_along_axis(position, order, np.arange(order.shape[1])[None, :].repeat(order.shape[0], 0), axis=1)
        top = np.take_along_axis(fused, order[:, :1], axis=1)
        top = np.where(top > 0, top, 1.0)
        features = (self.features_by_context[sel, RERANK_CONTEXT_GRID.index(params["rerank_context_weight"])]
                    if "rerank_context_weight" in params else self.features[sel]).copy()
        features[:, :, 0] = fused / top
        value = (features @ weights) * np.where(self.stub[sel], params["rerank_addenda_penalty"], 1.0)
        value = np.where(position < self.depth, value, fused / top - 1e6)  # below the reranked depth: fused order
        return np.where(valid, value, -np.inf)


def figures(ranks: np.ndarray) -> dict[str, float]:
    if not len(ranks):
        return {"items": 0}
    rr = np.where((ranks > 0) & (ranks <= K), 1.0 / np.maximum(ranks, 1), 0.0)
    return {"items": len(ranks), "hit@1": round(float(np.mean(ranks == 1)), 4),
            "hit@5": round(float(np.mean((ranks > 0) & (ranks <= 5))), 4), "mrr@10": round(float(rr.mean()), 4)}


def objective(pool: Pool, params: dict[str, float], rows: np.ndarray, weights: np.ndarray) -> float:
    ranks = pool.ranks(params, rows)
    rr = np.where((ranks > 0) & (ranks <= K), 1.0 / np.maximum(ranks, 1), 0.0)
    return float((rr * weights[rows]).sum() / weights[rows].sum())


def fit(pool: Pool, rows: np.ndarray, weights: np.ndarray, start: dict[str, float], *, fixed: dict[str, float],
        passes: int = 3) -> dict[str, float]:
    """Coordinate ascent over each parameter's grid; ties keep the current value (the simpler model wins none)."""
    params = {**start, **fixed}
    best = objective(pool, params, rows, weights)
    for _ in range(passes):
        moved = False
        for name, (grid, _, _) in PARAMETERS.items():
            if name in fixed:
                continue
            for value in grid:
                trial = {**params, name: value}
                score = objective(pool, trial, rows, weights)
                if score > best + 1e-9:
                    best, params, moved = score, trial, True
        if not moved:
            break
    return params


def folds_of(pool: Pool, folds: int, seed: int = 29) -> np.ndarray:
    """Fold number per item, stratified by set."""
    return stratified_folds([r["set"] for r in pool.records], folds, seed)


def cross_validate(pool: Pool, fold: np.ndarray, weights: np.ndarray, start: dict[str, float], *,
                   fixed: dict[str, float] | None = None) -> np.ndarray:
    """Held-out ranks: each fold ranked with the values fitted on the other folds."""
    ranks = np.zeros(len(pool.records), dtype=int)
    for f in range(int(fold.max()) + 1):
        train, test = np.where(fold != f)[0], np.where(fold == f)[0]
        params = fit(pool, train, weights, start, fixed=fixed or {})
        ranks[test] = pool.ranks(params, test)
    return ranks


def breakdown(pool: Pool, ranks: np.ndarray, weights: np.ndarray) -> dict:
    sets: dict[str, list[int]] = defaultdict(list)
    types: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(pool.records):
        sets[r["set"]].append(i)
        types[r["type"]].append(i)
    rr = np.where((ranks > 0) & (ranks <= K), 1.0 / np.maximum(ranks, 1), 0.0)
    return {"overall": figures(ranks), "objective": round(float((rr * weights).sum() / weights.sum()), 4),
            "set_mean_mrr@10": round(float(np.mean([figures(ranks[v])["mrr@10"] for v in sets.values()])), 4),
            "by_set": {s: figures(ranks[v]) for s, v in sorted(sets.items())},
            "by_type": {t: figures(ranks[v]) for t, v in sorted(types.items())}}


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    feat = sub.add_parser("features")
    feat.add_argument("files", nargs="+", type=Path)
    feat.add_argument("--data-dir", type=Path, default=Path(os.environ.get("REGBOT_DATA_DIR", ".regbot")))
    feat.add_argument("--cache", type=Path, required=True)
    feat.add_argument("--fold", choices=("cues", "always", "never"), default="cues")
    feat.add_argument("--after-unrelated", action="store_true")
    fitp = sub.add_parser("fit")
    fitp.add_argument("--cache", type=Path, required=True)
    fitp.add_argument("--folds", type=int, default=5)
    fitp.add_argument("--only", default="", help="comma-separated parameters to fit; the others keep their current "
                                                  "values (a new signal earns its place against today's ranking)")
    fitp.add_argument("--write", action="store_true", help=f"write the fit as `candidate` to {RANKING_FIT}")
    fitp.add_argument("--apply", action="store_true", help="with --write: make the fitted values the defaults "
                                                            "(after checking them with `regbot eval`)")
    args = parser.parse_args()
    if args.command == "features":
        records = extract(args.data_dir, args.files, fold=args.fold, after_unrelated=args.after_unrelated)
        args.cache.write_bytes(pickle.dumps(records))
        return 0
    records = pickle.loads(args.cache.read_bytes())
    pool = Pool(records, RetrievalConfig().rerank_depth)
    sizes: dict[str, int] = defaultdict(int)
    for r in records:
        sizes[r["set"]] += 1
    # Real inquiries (`type: real_interp`) weigh as much as all the written questions together: they are what the
    # bot is for and what hidden checks sample; within each group every item counts alike.
    real = np.array([r["type"] == "real_interp" for r in records])
    weights = np.where(real, 0.5 / max(1, real.sum()), 0.5 / max(1, (~real).sum()))
    defaults = RetrievalConfig()
    current = {name: float(getattr(defaults, name)) for name in PARAMETERS}
    fold = folds_of(pool, args.folds)
    everything = np.arange(len(records))
    held = {n: v for n, v in current.items() if n not in args.only.split(",")} if args.only else {}
    report: dict = {"items": len(records), "sets": dict(sizes), "folds": args.folds,
                    "current": breakdown(pool, pool.ranks(current), weights)}
    cv = cross_validate(pool, fold, weights, current, fixed=held)
    report["cv_held_out"] = breakdown(pool, cv, weights)
    log(f"objective, current: {report['current']['objective']}  cv held-out: {report['cv_held_out']['objective']}")
    # A parameter earns its place when cross-validation with it beats cross-validation without it.
    dropped: dict[str, float] = {}
    ablation = {}
    for name, (_, neutral, _) in PARAMETERS.items():
        if name in held:
            continue
        without = cross_validate(pool, fold, weights, current, fixed={**held, **dropped, name: neutral})
        score = breakdown(pool, without, weights)["objective"]
        ablation[name] = score
        if score >= report["cv_held_out"]["objective"] - KEEP_MARGIN:
            dropped[name] = neutral
            log(f"  {name}: neutral {neutral} does as well in CV ({score}): dropped")
        else:
            log(f"  {name}: without it CV {score}: kept")
    if dropped:
        cv = cross_validate(pool, fold, weights, current, fixed={**held, **dropped})
        report["cv_held_out"] = breakdown(pool, cv, weights)
    report["cv_without"] = ablation
    final = fit(pool, everything, weights, current, fixed={**held, **dropped})
    report["fitted_in_sample"] = breakdown(pool, pool.ranks(final), weights)
    report["values"] = final
    report["dropped"] = sorted(dropped)
    log(f"final cv held-out: {report['cv_held_out']['objective']}  in-sample: "
        f"{report['fitted_in_sample']['objective']}")
    print(json.dumps(report, ensure_ascii=False, indent=1))
    if args.write:
        held = report["cv_held_out"]
        existing = yaml.safe_load(RANKING_FIT.read_text(encoding="utf-8")) if RANKING_FIT.exists() else {}
        data = {
            "fitted": dt.date.today().isoformat(),
            "method": f"coordinate ascent on cached candidate features, {args.folds}-fold cross-validation "
                      "stratified by set, objective MRR@10 over distinct articles with real inquiries weighing as "
                      "much as all written questions (benchmarks/ranking_fit.py)",
            "sets": {name: n for name, n in sorted(sizes.items())},
            "items": len(records),
            "decision": "applied" if args.apply else existing.get("decision", "not applied"),
            "values": {**existing.get("values", current), **({k: float(v) for k, v in final.items()}
                                                             if args.apply else {})},
            "candidate": {
                "values": {k: float(v) for k, v in final.items()},
                "dropped_to_neutral": sorted(dropped),
                "cross_validation": {
                    "held_out_objective": held["objective"],
                    "hand_set_objective_in_sample": report["current"]["objective"],
                    "candidate_objective_in_sample": report["fitted_in_sample"]["objective"],
                    "held_out": held["overall"],
                    "hand_set_in_sample": report["current"]["overall"],
                    "held_out_by_set_mrr@10": {s: v["mrr@10"] for s, v in held["by_set"].items()},
                    "hand_set_by_set_mrr@10": {s: v["mrr@10"] for s, v in report["current"]["by_set"].items()},
                    "held_out_by_type_mrr@10": {t: v["mrr@10"] for t, v in held["by_type"].items()},
                    "hand_set_by_type_mrr@10": {t: v["mrr@10"] for t, v in report["current"]["by_type"].items()},
                    "cv_objective_without_each": ablation,
                },
            },
        }
        if "focus" in existing:  # benchmarks/focus_fit.py's own fit
            data["focus"] = existing["focus"]
        header = ("# Ranking weights, priors and reranker factors: `values` are RetrievalConfig's defaults; `candidate`"
                  " is what\n# benchmarks/ranking_fit.py fitted, with its cross-validation and why it is or is not "
                  "applied.\n")
        RANKING_FIT.write_text(header + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=115),
                               encoding="utf-8")
        log(f"wrote {RANKING_FIT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
