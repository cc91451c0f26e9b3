"""Does each glossary entry earn its place on the pooled foreign sets? An ablation, one entry at a time.

For every entry of rag/data/glossary.yaml: the pooled items whose user turns the entry reads (glossary matching
only, cheap), then those items alone re-run through the offline pipeline with the entry taken out, and the change
of Hit@5 and MRR@10 per set (the entry's effect = with it − without it; an item it does not read cannot change).

Provenance is read from the history of the file. An entry as written in the first commit (FIRST: general
vocabulary, written before any eval set was) is "general". An entry added or changed by a later commit that chose
words from a set's misses (TUNED: commit → the set that prompted it) is "tuned"; taking it out means going back
to its first form (an entry matched by a shared term), or dropping it when it had none. An entry added by a
WRITTEN commit (vocabulary written from the statutes' article titles, no set's misses read) is general too.

The rule:
  - a tuned entry stays only if, on the pool EXCLUDING the set that prompted it, it helps, or is neutral and reads
    at least one answerable item there;
  - any entry that hurts the whole pool goes;
  - a general entry stays unless it hurts the whole pool.
Helps / hurts, over the answerable items: Hit@5, MRR@10 and the share refused (the pipeline runs whole, and an
entry is also what lets the judge read a question: a question the glossary cannot read is refused); and over the
out-of-scope items, the number refused (an entry that reads one can let it be answered). An entry helps when one
figure is better and none worse, hurts when one is worse and none better; otherwise (none moves, or they move
apart) it is neutral.

    REGBOT_DATA_DIR=… REGBOT_LLM=offline .venv/bin/python benchmarks/glossary_fit.py [--apply] [--out FILE]
        [--since REF | --bare]

`--apply` rewrites the YAML line of each entry that goes (back to its first form, or removed); then the items
any such entry read are re-run together and the per-set figures before / after are printed.
`--bare` judges instead each one-word term that reads an out-of-scope item (alone or in a thread), taken out of
its entry alone (the entry's phrases stay): the word goes when, with it, the pool refuses fewer out-of-scope
questions, or when it hurts the pool; `--apply` then takes those words out.
`--since REF` judges only the entries added after REF (the others stay as they are), and adds what they move
held out per set: for each set, the new entries the rule keeps when judged on the other sets alone, and that
set's figures with those (`held_out_by_set`, against the glossary of REF's entries and the pool rule's choice).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

GLOSSARY_FILE = "rag/data/glossary.yaml"
SETS = ("foreign-dev", "heldout-foreign-1", "heldout-foreign-2", "heldout-foreign-3", "heldout-foreign-4",
        "foreign-thread-oos")
FIRST = "2cb658b"  # the glossary as first written, before foreign-dev and before heldout-foreign-1 was read
# Commits that added words chosen from a set's misses → that set. The later two name "the pooled tuning sets'
# misses"; foreign-dev, which they were checked against, did not choose them (docs/languages.md).
TUNED = {"ae36c21": "foreign-dev", "ec73d01": "foreign-dev",
         "5e89f1a": "heldout-foreign-1", "aa94623": "heldout-foreign-1"}
# Commits that added general vocabulary, written from the statutes' article titles without looking at any set's
# misses: an entry they added is general, whatever terms it shares with an entry a tuned commit once had.
WRITTEN = ("6cb6d1a", "22eef81", "e23b287")

Key = tuple[str, tuple[str, ...], tuple[str, ...]]  # (language, terms, ko)
FIGURES = (0, 1, 2, 4)  # of an entry's per-set gains: Hit@5, MRR@10, answerable answered, out of scope refused


def entry_lines(text: str) -> list[tuple[int, Key, str]]:
    """(line number, key, line) of every one-line entry (`  - {terms: …}`) of a glossary file."""
    rows, language = [], ""
    for number, line in enumerate(text.splitlines()):
        if line[:1].isalpha() and line.rstrip().endswith(":"):
            language = line.rstrip()[:-1]
        elif line.lstrip().startswith("- {"):
            data = yaml.safe_load(line.strip()[2:])
            rows.append((number, (language, tuple(map(str, data["terms"])), tuple(map(str, data["ko"]))), line))
    return rows


def at(commit: str) -> list[tuple[int, Key, str]]:
    return entry_lines(subprocess.run(["git", "show", f"{commit}:{GLOSSARY_FILE}"], cwd=REPO, check=True,
                                      capture_output=True, text=True).stdout)


def counterpart(key: Key, version: list[tuple[int, Key, str]]) -> tuple[Key, str] | None:
    """The entry of an older version sharing the most terms with `key` (same language), if any."""
    best = max(((len(set(key[1]) & set(k[1])), k, line) for _, k, line in version if k[0] == key[0]),
               default=(0, None, ""))
    return (best[1], best[2]) if best[0] else None


def provenance(current: list[tuple[int, Key, str]]) -> dict[Key, dict]:
    """Per current entry: `sets` (the sets whose misses changed it; empty: general) and `first` (its first form's
    key and line, or None). An older entry that is still an entry today, as it was, is nobody else's earlier form
    (a new entry that borrowed one of its terms is new)."""
    keys = {key for _, key, _ in current}
    first, *versions = [at(commit) for commit in (FIRST, *TUNED)]
    written = {key for commit in WRITTEN for _, key, _ in at(commit)} \
        - {key for commit in WRITTEN for _, key, _ in at(f"{commit}~1")}
    out = {}
    for _, key, _ in current:
        if key in written:
            out[key] = {"sets": [], "first": None}
            continue

        def before(version: list[tuple[int, Key, str]], key: Key = key) -> tuple[Key, str] | None:
            return counterpart(key, [row for row in version if row[1] == key or row[1] not in keys])

        origin = before(first)
        sets, last = set(), origin[0] if origin else None
        for commit, version in zip(TUNED, versions, strict=True):
            now = before(version)
            if (now[0] if now else None) != last:
                sets.add(TUNED[commit])
            last = now[0] if now else None
        out[key] = {"sets": sorted(sets), "first": origin if sets else None}
    return out


def sign(*gains: float) -> int:
    """Helps (1): some figure gains and none loses; hurts (-1): some loses and none gains; else neutral (0)."""
    up = any(g > 1e-9 for g in gains)
    down = any(g < -1e-9 for g in gains)
    return 0 if up == down else (1 if up else -1)


async def main_async(args: argparse.Namespace) -> int:
    from bot.app import build_components
    from bot.config import Settings
    from rag.eval import Evaluator, load_eval_file
    from rag.lang.glossary import Glossary, GlossaryEntry

    components = build_components(Settings(REGBOT_LLM="offline"))
    pipeline = components.pipeline
    pipeline.stages.cache = None
    analyzer = components.retriever.analyzer
    shared: Glossary = analyzer.glossary
    names = components.lookup.names()
    evaluator = Evaluator(pipeline, same_doc=lambda gold, doc: (names.resolve(gold).doc or gold).replace(" ", "")
                          == doc.replace(" ", ""))
    items = [(name, item) for name in SETS for item in load_eval_file(REPO / "eval" / f"{name}.jsonl")]
    gold = {name: sum(1 for n, i in items if n == name and i.gold) for name in SETS}
    full = list(shared.entries)

    def use(entries: list[GlossaryEntry]) -> None:
        """Swap the entries of the one glossary every stage holds; the analyzer's per-question cache goes too."""
        fresh = Glossary(entries)
        fresh.function_words, fresh.followup = shared.function_words, shared.followup
        shared.__dict__.update(fresh.__dict__)
        analyzer._cache.clear()

    async def score(chosen: list[int]) -> dict[int, tuple[float, float, bool]]:
        out = {}
        for index in chosen:
            row = await evaluator.run_item(items[index][1])
            out[index] = (float(row["hit5"]), row["mrr"], row["refused"])
        return out

    base = await score(list(range(len(items))))
    reads: dict[GlossaryEntry, set[int]] = defaultdict(set)
    for index, (_, item) in enumerate(items):
        for turn in item.turns:
            if turn.role.value == "user":
                for entry in shared.read(turn.content).entries:
                    reads[entry].add(index)
    path = REPO / GLOSSARY_FILE
    if args.bare:
        return await bare_words(path, shared, full, items, gold, base, use, score, apply=args.apply)
    current = entry_lines(path.read_text(encoding="utf-8"))
    origin = provenance(current)
    by_key = {(e.language, e.terms, e.korean): e for e in full}
    old = {key for _, key, _ in at(args.since)} if args.since else None
    results = []
    for _, key, _ in current:
        if old is not None and key in old:
            continue
        entry = by_key[key]
        chosen = sorted(reads.get(entry, ()))
        info = origin[key]
        rows = {}
        if chosen:
            without = [e for e in full if e is not entry]
            if info["first"]:
                old = info["first"][0]
                without.insert(full.index(entry), GlossaryEntry(language=old[0], terms=old[1], korean=old[2],
                                                                examples=entry.examples,
                                                                names_topic=entry.names_topic))
            use(without)
            rows = await score(chosen)
            use(full)
        delta = gains_by_set(rows, base, items)
        outside = [n for n in SETS if n not in info["sets"]]
        pool = sign(*(sum(delta[n][i] for n in SETS) for i in FIGURES))
        rest = sign(*(sum(delta[n][i] for n in outside) for i in FIGURES))
        reads_rest = sum(delta[n][3] for n in outside)
        keep = pool >= 0 and (not info["sets"] or rest > 0 or (rest == 0 and reads_rest > 0))
        results.append({"language": key[0], "terms": key[1][:3], "sets": info["sets"], "keep": keep,
                        "gains": {n: [round(delta[n][i], 6) for i in FIGURES] for n in SETS},
                        "reverts_to_first_form": bool(info["first"]), "pool": pool, "rest": rest,
                        "reads": {n: delta[n][3] for n in SETS},
                        "delta_hit5": {n: round(delta[n][0] / (gold[n] or 1), 4) for n in SETS},
                        "delta_mrr": {n: round(delta[n][1] / (gold[n] or 1), 4) for n in SETS},
                        "delta_answered": {n: round(delta[n][2] / (gold[n] or 1), 4) for n in SETS}})
        print(json.dumps(results[-1], ensure_ascii=False), file=sys.stderr, flush=True)
    summary = {"entries": len(results), "general": sum(1 for r in results if not r["sets"]),
               "tuned": sum(1 for r in results if r["sets"]),
               "dropped": [r for r in results if not r["keep"]],
               "before": figures(base, items, gold)}
    if old is not None:
        summary["held_out_by_set"] = await held_out(results, full, old, by_key, items, gold, base, use, score,
                                                     reads)
    if args.apply:
        summary["after"] = await apply(path, current, origin, results, base, items, gold, use, score, reads, by_key)
    text = json.dumps(summary, ensure_ascii=False, indent=1)
    if args.out:
        args.out.write_text(json.dumps({**summary, "results": results}, ensure_ascii=False, indent=1),
                            encoding="utf-8")
    print(text)
    return 0


async def held_out(results, full, old, by_key, items, gold, base, use, score, reads) -> dict:
    """Per set: its figures with none of the new entries, with those the rule keeps judged on the other sets
    (leave one set out), and with those it keeps on the whole pool."""
    new = [by_key[k] for k in by_key if k not in old]
    row_of = {(r["language"], r["terms"]): r for r in results}

    def kept(entry, outside: tuple[str, ...]) -> bool:
        row = row_of[(entry.language, entry.terms[:3])]
        return sign(*(sum(row["gains"][n][i] for n in outside) for i in range(len(FIGURES)))) >= 0

    touched = sorted({i for e in new for i in reads.get(e, ())})
    out = {}
    for label, chooser in (("none", lambda name: []),
                           ("held_out", lambda name: [e for e in new if kept(e, tuple(n for n in SETS if n != name))]),
                           ("pool", lambda name: [e for e in new if kept(e, SETS)])):
        for name in SETS:
            chosen = set(chooser(name))
            use([e for e in full if e not in new or e in chosen])
            after = dict(base) | await score([i for i in touched if items[i][0] == name])
            out.setdefault(name, {})[label] = figures(after, items, gold)[name] | {"entries": len(chosen)}
    use(full)
    for name in SETS:
        out[name]["all_new"] = figures(base, items, gold)[name] | {"entries": len(new)}
    return out


async def bare_words(path, shared, full, items, gold, base, use, score, *, apply: bool) -> int:
    """`--bare`: each one-word term that reads an out-of-scope item of the pool, taken out of its entry alone (its
    phrases stay; an entry of that one term goes). The word goes when it lowers the pool's out-of-scope refusals
    (DESIGN: expansion must not lower them) or hurts the pool."""
    from rag.lang.glossary import GlossaryEntry, _fold

    reads: dict[tuple[GlossaryEntry, str], set[int]] = defaultdict(set)
    for index, (_, item) in enumerate(items):
        for turn in item.turns:
            if turn.role.value != "user":
                continue
            read = shared.read(turn.content)
            if read.language not in ("en", "vi"):
                continue
            words, owners, _ = shared._match(turn.content, read.language)
            for entry in read.entries:
                taken = {w for w, owner in zip(words, owners, strict=True) if owner is entry}
                for term in entry.terms:
                    folded = _fold(term, entry.language)
                    if len(folded) == 1 and folded[0] in taken:
                        reads[(entry, term)].add(index)
    candidates = [key for key, chosen in reads.items() if any(out_of_scope(items[i][1]) for i in chosen)]
    results, going = [], []
    for entry, term in candidates:
        rest = tuple(t for t in entry.terms if t != term)
        without = [e for e in full if e is not entry]
        if rest:
            without.insert(full.index(entry), entry.model_copy(update={"terms": rest}))
        use(without)
        rows = await score(sorted(reads[(entry, term)]))
        use(full)
        delta = gains_by_set(rows, base, items)
        gains = [sum(delta[n][i] for n in SETS) for i in FIGURES]
        goes = gains[3] < 0 or sign(*gains) < 0
        row = {"language": entry.language, "term": term, "entry": entry.terms[:3], "goes": goes,
               "pool": {"hit5": gains[0], "mrr": round(gains[1], 4), "answered": gains[2], "oos_refused": gains[3]},
               "reads": {n: delta[n][3] for n in SETS}}
        results.append(row)
        print(json.dumps(row, ensure_ascii=False), file=sys.stderr, flush=True)
        if goes:
            going.append((entry, term))
    summary: dict = {"candidates": len(results), "going": [r for r in results if r["goes"]],
                     "before": figures(base, items, gold)}
    if apply and going:
        text = path.read_text(encoding="utf-8")
        for entry in dict.fromkeys(entry for entry, _ in going):
            text = _drop_terms(text, entry, {term for e, term in going if e is entry})
        path.write_text(text, encoding="utf-8")
        from rag.lang.glossary import load_glossary

        use(list(load_glossary(path).entries))
        touched = sorted(set().union(*(reads[key] for key in going)))
        summary["after"] = figures(dict(base) | await score(touched), items, gold)
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    return 0


def _drop_terms(text: str, entry, terms: set[str]) -> str:
    """The glossary file with `terms` taken out of `entry`'s line (the line goes when no term is left)."""
    lines = text.splitlines(keepends=True)
    for number, key, line in entry_lines(text):
        if key[0] == entry.language and key[1] == entry.terms:
            rest = [t for t in key[1] if t not in terms]
            if not rest:
                del lines[number]
            else:
                start, end = line.index("terms: [") + len("terms: ["), line.index("], ko:")
                lines[number] = line[:start] + ", ".join(rest) + line[end:] + "\n"
            return "".join(lines)
    raise ValueError(f"no line for {entry.terms}")


def out_of_scope(item) -> bool:
    return not item.gold and "out_of_scope" in item.type


def gains_by_set(rows: dict, base: dict, items: list) -> dict[str, list[float]]:
    """Per set, what the glossary in full gains over the variant scored in `rows`: summed over its answerable items,
    in hit5, in mrr, in not refused, and the answerable items read; over its out-of-scope items, in refused (an
    entry that reads one can make it answered)."""
    delta = {name: [0.0, 0.0, 0.0, 0, 0.0] for name in SETS}
    for index, (hit5, mrr, refused) in rows.items():
        name, item = items[index]
        if item.gold:
            delta[name][0] += base[index][0] - hit5
            delta[name][1] += base[index][1] - mrr
            delta[name][2] += float(refused) - float(base[index][2])
            delta[name][3] += 1
        elif out_of_scope(item):
            delta[name][4] += float(base[index][2]) - float(refused)
    return delta


def figures(scores: dict, items: list, gold: dict) -> dict:
    out = {}
    for name in SETS:
        rows = [scores[i] for i, (n, item) in enumerate(items) if n == name and item.gold]
        outside = [scores[i] for i, (n, item) in enumerate(items) if n == name and out_of_scope(item)]
        answerable = gold[name] or 1  # a set of out-of-scope questions only has no answerable figures
        out[name] = {"hit@5": round(sum(r[0] for r in rows) / answerable, 4),
                     "mrr@10": round(sum(r[1] for r in rows) / answerable, 4),
                     "answerable_refused": round(sum(r[2] for r in rows) / answerable, 4),
                     "out_of_scope_refused": f"{sum(r[2] for r in outside)} of {len(outside)}"}
    return out


async def apply(path, current, origin, results, base, items, gold, use, score, reads, by_key) -> dict:
    """Rewrite the dropped entries' lines, re-run every item one of them read, and return the figures after."""
    from rag.lang.glossary import load_glossary

    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    dropped = {(r["language"], r["terms"]) for r in results if not r["keep"]}
    touched: set[int] = set()
    written: set[str] = set()  # an entry split in two goes back to one first form, written once
    for number, key, line in sorted(current, reverse=True):
        if (key[0], key[1][:3]) not in dropped:
            continue
        touched |= reads.get(by_key[key], set())
        first = origin[key]["first"]
        if first and first[1] not in written:
            written.add(first[1])
            flag = "{topic: false, "
            lines[number] = (first[1].replace("{", flag, 1) if flag in line and flag not in first[1]
                             else first[1]).rstrip("\n") + "\n"
        else:
            del lines[number]
    path.write_text("".join(lines), encoding="utf-8")
    use(list(load_glossary(path).entries))
    after = dict(base) | await score(sorted(touched))
    return figures(after, items, gold)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apply", action="store_true", help="rewrite the YAML lines of the entries that go")
    parser.add_argument("--out", type=Path, help="also write every entry's row as JSON")
    parser.add_argument("--since", help="judge only the entries added after this commit; adds held_out_by_set")
    parser.add_argument("--bare", action="store_true",
                        help="judge the one-word terms that read an out-of-scope item, each taken out alone")
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
