"""Figures of answers in the asker's language, read from `regbot eval FILE --json` output (no index needed).

    REGBOT_DATA_DIR=… python -m bot.cli eval eval/foreign-dev.jsonl --json > /tmp/foreign.json
    python -m benchmarks.languages /tmp/foreign.json

Per language of the question (rag/lang's detector on the last user turn): answerable items, Hit@5, the share
refused, the share whose answer's first 200 characters read as that language, and the share whose answer holds
an `answer_keywords` entry (the Korean keyword of the answering article); out-of-scope items refused, and
whether their refusal is in the asker's language. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from rag.lang import detect_language


def _keyword_present(answer: str, keywords: list[str]) -> bool:
    return any(any(option in answer for option in keyword.split("|")) for keyword in keywords)


def language_figures(result: dict, items: dict[str, dict]) -> dict:
    """The figures by question language; `items` maps eval ids to the eval file's items."""
    groups: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
    for row in result["items"]:
        source = items[row["id"]]
        question = [t for t in source["turns"] if t["role"] == "user"][-1]["content"]
        groups[detect_language(question)].append((row, source))
    out = {}
    for language, pairs in sorted(groups.items()):
        answerable = [(r, s) for r, s in pairs if s["gold"]]
        oos = [(r, s) for r, s in pairs if s["type"] == "out_of_scope"]

        def share(values: list[bool]) -> float | None:
            return round(sum(values) / len(values), 3) if values else None

        out[language] = {
            "answerable": len(answerable),
            "refused": share([r["refused"] for r, _ in answerable]),
            "first_200_in_language": share([detect_language(r["answer"][:200]) == language for r, _ in answerable
                                            if not r["refused"]]),
            "keyword_in_answer": share([_keyword_present(r["answer"], s["answer_keywords"]) for r, s in answerable
                                        if s["answer_keywords"]]),
            "out_of_scope": len(oos),
            "out_of_scope_refused": share([r["refused"] for r, _ in oos]),
            "refusal_in_language": share([detect_language(r["answer"][:200]) == language for r, _ in oos]),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", type=Path, help="the `regbot eval --json` output")
    parser.add_argument("--eval-file", type=Path, default=Path("eval/foreign-dev.jsonl"))
    args = parser.parse_args(argv)
    result = json.loads(args.result.read_text(encoding="utf-8"))
    items = {d["id"]: d for d in map(json.loads, args.eval_file.read_text(encoding="utf-8").splitlines()) if d}
    figures = {"hit@5": result["metrics"].get("hit@5"),
               "hit@5_by_type": {t: m.get("hit@5") for t, m in result["by_type"].items()},
               "by_language": language_figures(result, items)}
    json.dump(figures, sys.stdout, ensure_ascii=False, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
