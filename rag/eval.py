"""Evaluation of retrieval and answers on a JSONL question set (DESIGN.md §3 "Eval file format")."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.errors import EvalFileError
from rag.lang.detect import FOREIGN, detect_language
from rag.lang.reference import is_division_label
from rag.models import Answer, Message, Outcome, Role, Route, Scope
from rag.text import doc_key

if TYPE_CHECKING:  # the pipeline pulls in the LLM SDKs: `regbot eval` checks its file before paying for them
    from rag.pipeline import AnswerPipeline


class GoldRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    doc: str
    article: str = ""


class EvalItem(BaseModel):
    """One question of the eval file."""

    id: str
    type: str
    turns: list[Message]
    gold: list[GoldRef] = Field(default_factory=list)
    answer_keywords: list[str] = Field(default_factory=list)
    evidence: str = ""


def load_eval_file(path: Path) -> list[EvalItem]:
    """Every item of a JSONL eval file; EvalFileError (one line: file, line number, problem) on bad input."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise EvalFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise EvalFileError(f"{path}: is a folder, not an eval file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalFileError(f"{path}: cannot be read ({exc.__class__.__name__})") from None
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalFileError(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(data, dict):
            raise EvalFileError(f"{path}:{number}: expected a JSON object, got {type(data).__name__}")
        try:
            items.append(EvalItem.model_validate(data))
        except ValidationError as exc:
            raise EvalFileError(f"{path}:{number}: {_first_problem(exc)}") from None
    if not items:
        raise EvalFileError(f"{path}: no eval items (one JSON object a line; see docs/eval.md)")
    return items


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "missing":
        return f"missing field '{where}'"
    return f"field '{where}': {error['msg']}"


def retrieved_refs(answer: Answer) -> list[dict[str, str]]:
    """Ranked, de-duplicated (doc, article) of what the answer retrieved; a lookup reports what it returned."""
    refs: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    if answer.route == Route.LOOKUP:
        rows = [(c.doc, c.article or c.chapter, c.chapter) for c in answer.citations]
    else:
        rows = [(h.chunk.doc, h.chunk.article, h.chunk.chapter) for h in answer.retrieved]
    for doc, article, chapter in rows:
        if (doc, article) in seen:
            continue
        seen.add((doc, article))
        refs.append({"doc": doc, "article": article, "chapter": chapter})
    return refs


LEAD_CHARS = 200  # "keywords in the first 200 characters": does the answer lead with the answer?


def keyword_coverage(text: str, keywords: Iterable[str]) -> float | None:
    """Share of keywords (each `a|b` an alternative) present in the text, ignoring spaces; None without keywords."""
    keywords = list(keywords)
    if not keywords:
        return None
    compact = re.sub(r"\s+", "", text)
    found = sum(1 for k in keywords if any(re.sub(r"\s+", "", alt) in compact for alt in k.split("|")))
    return found / len(keywords)


def answer_in_language(text: str, language: str) -> bool:
    """Whether the answer's first 200 characters read as `language` (the question's): an English question's
    answer may quote the Korean article, but it opens in English."""
    return detect_language(text[:LEAD_CHARS]) == language


class Evaluator:
    """Runs every item through the pipeline and scores it. `same_doc(gold_doc, doc)` decides document matches."""

    def __init__(self, pipeline: AnswerPipeline, *, same_doc: Callable[[str, str], bool] | None = None,
                 k: int = 10) -> None:
        self.pipeline = pipeline
        self.same_doc = same_doc or (lambda gold, doc: doc_key(gold) == doc_key(doc))
        self.k = k

    def matches(self, gold: GoldRef, ref: dict[str, str]) -> bool:
        if not self.same_doc(gold.doc, ref["doc"]):
            return False
        if gold.article == "*":
            return True
        if is_division_label(gold.article):
            return ref.get("chapter") == gold.article or ref["article"] == gold.article
        return ref["article"] == gold.article

    async def run(self, items: list[EvalItem], progress: Callable[[int], None] | None = None) -> dict[str, Any]:
        rows = []
        for done, item in enumerate(items, start=1):
            rows.append(await self.run_item(item))
            if progress:
                progress(done)
        return {"metrics": summarise(rows), "by_type": by_type(rows), "items": [r["item"] for r in rows]}

    async def run_item(self, item: EvalItem) -> dict[str, Any]:
        question = item.turns[-1].content
        history = tuple(item.turns[:-1])
        from rag.pipeline import collect

        answer, events = await collect(self.pipeline, question, history=history, scope=Scope(), turn_id=item.id)
        text = answer.text if answer else next((e.text for e in events if e.kind == "error"), "")
        refs = retrieved_refs(answer)[: self.k] if answer else []
        ranks = [next((i for i, r in enumerate(refs, 1) if self.matches(g, r)), None) for g in item.gold]
        found = [r for r in ranks if r is not None]
        first = min(found) if found else None
        outcome = answer.outcome.value if answer is not None else "error"
        refused = outcome == Outcome.REFUSED
        language = detect_language(question)
        return {
            "type": item.type,
            "has_gold": bool(item.gold),
            "hit1": first is not None and first <= 1,
            "hit5": first is not None and first <= 5,
            "mrr": 1.0 / first if first else 0.0,
            "all_gold": all(r is not None for r in ranks) if item.gold else None,
            "coverage": keyword_coverage(text, item.answer_keywords),
            "lead_coverage": keyword_coverage(text[:LEAD_CHARS], item.answer_keywords) if item.gold else None,
            "lead_in_language": answer_in_language(text, language) if language in FOREIGN else None,
            "refused": refused,
            "hedged": outcome == Outcome.HEDGED,
            "retrieved_nothing": answer is not None and answer.route == Route.CHITCHAT and not answer.retrieved,
            "llm_calls": answer.llm_calls if answer else 0,
            "item": {
                "id": item.id,
                "type": item.type,
                "route": answer.route.value if answer else "error",
                "retrieved": refs,
                "answer": text,
                "citations": [c.model_dump(include={"doc", "article", "title", "quote", "url"})
                              for c in (answer.citations if answer else ())],
                "outcome": outcome,
                "refused": refused,
            },
        }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of DESIGN.md §3 over `rows` (None where no row qualifies). Answerable items are those with gold;
    a refusal is a turn whose outcome is `refused`; a hedge (the closest article, quoted as such) is not one and
    has its own rates."""
    gold = [r for r in rows if r["has_gold"]]
    coverage = [r["coverage"] for r in rows if r["coverage"] is not None]
    lead = [r["lead_coverage"] for r in rows if r.get("lead_coverage") is not None]
    oos = [r for r in rows if r["type"] == "out_of_scope"]
    chat = [r for r in rows if r["type"] == "chitchat"]
    multi = [r for r in gold if r["all_gold"] is not None and r["type"] == "compound"]
    # English or Vietnamese questions with a gold or out of scope: does the answer (or refusal) open in their language?
    foreign = [r for r in [*gold, *oos] if r.get("lead_in_language") is not None]

    def mean(values: list[float]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    return {
        "items": len(rows),
        "items_with_gold": len(gold),
        "hit@1": mean([float(r["hit1"]) for r in gold]),
        "hit@5": mean([float(r["hit5"]) for r in gold]),
        "mrr@10": mean([r["mrr"] for r in gold]),
        "all_gold@10": mean([float(r["all_gold"]) for r in multi]),
        "keyword_coverage": mean(coverage),
        "keyword_coverage_first_200": mean(lead),
        "refusal_rate_out_of_scope": mean([float(r["refused"]) for r in oos]),
        "false_refusal_rate_answerable": mean([float(r["refused"]) for r in gold]),
        "hedged_rate_answerable": mean([float(r["hedged"]) for r in gold]),
        "hedged_rate_out_of_scope": mean([float(r["hedged"]) for r in oos]),
        "no_retrieval_rate_chitchat": mean([float(r["retrieved_nothing"]) for r in chat]),
        "llm_calls_mean": mean([float(r["llm_calls"]) for r in rows]),
        "answer_language_first_200": mean([float(r["lead_in_language"]) for r in foreign]),
    }


def by_type(rows: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["type"]].append(row)
    return {name: summarise(group) for name, group in sorted(groups.items())}


def dumps(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, indent=2)


__all__ = ["EvalItem", "Evaluator", "Role", "load_eval_file"]
