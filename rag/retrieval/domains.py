"""Domain classification of a question (keyword ∪ vector) and of the documents, from an editable table."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from rag.retrieval.embedder import Embedder
from rag.retrieval.query import AnalyzedQuery
from rag.retrieval.tokenizer import Tokenizer
from rag.text import doc_key, normalize_text

DEFAULT_DOMAINS = Path(__file__).resolve().parent.parent / "data" / "domains.yaml"


class DomainSpec(BaseModel):
    """One subject area: the documents in it and the words and audiences that point to it."""

    model_config = ConfigDict(frozen=True)

    name: str
    documents: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    audiences: tuple[str, ...] = ()
    description: str = ""


def load_domains(path: Path = DEFAULT_DOMAINS) -> list[DomainSpec]:
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    specs = []
    for name, body in data.items():
        body = body or {}
        specs.append(DomainSpec(
            name=str(name),
            documents=tuple(normalize_text(str(d)) for d in body.get("documents", [])),
            keywords=tuple(normalize_text(str(k)) for k in body.get("keywords", [])),
            audiences=tuple(str(a) for a in body.get("audiences", [])),
            description=normalize_text(str(body.get("description", ""))),
        ))
    return specs


class DomainDecision(BaseModel):
    """The domains a question is about (empty: unknown, nothing is demoted), with how each was found."""

    model_config = ConfigDict(frozen=True)

    domains: tuple[str, ...] = ()
    keyword_hits: dict[str, int] = Field(default_factory=dict)
    similarity: dict[str, float] = Field(default_factory=dict)
    named: bool = False  # set from a regulation the question names


class DomainClassifier:
    """Keyword ∪ vector: a domain is chosen when the question uses its words or audience, or when the question
    vector is closest to the domain's description by a clear lead (cosine ≥ `threshold`, and ahead of the
    runner-up by `margin`: e5 similarities are bunched, so a near tie says nothing).
    """

    def __init__(self, specs: Sequence[DomainSpec], tokenizer: Tokenizer, *, embedder: Embedder | None = None,
                 threshold: float = 0.82, margin: float = 0.01, secondary_rank: int = 2) -> None:
        self.specs = list(specs)
        self.tokenizer = tokenizer
        self.embedder = embedder
        self.threshold = threshold
        self.margin = margin
        self.secondary_rank = secondary_rank
        # Whole keywords only, matched in the question without spaces: a compound keyword's parts (출산휴가 → 휴가)
        # would point everywhere.
        self._keywords = [(spec, {k.replace(" ", "") for k in spec.keywords if k}) for spec in self.specs]
        self._doc_keys = [(spec.name, [doc_key(d) for d in spec.documents]) for spec in self.specs]
        self._descriptions: np.ndarray | None = None
        self._document_domain: dict[str, str] = {}

    def document_domain(self, doc: str, declared: str = "") -> str:
        """A chunk's domain: its own when ingest set one, else the first domain listing its document."""
        if declared:
            return declared
        cached = self._document_domain.get(doc)
        if cached is not None:
            return cached
        key = doc_key(doc)
        found = next((name for name, keys in self._doc_keys if any(k and k in key for k in keys)), "")
        self._document_domain[doc] = found
        return found

    def classify(self, query: AnalyzedQuery, vector: Sequence[float] | None = None) -> DomainDecision:
        compact = query.all_text.replace(" ", "").lower()
        hits: dict[str, int] = {}
        for spec, keywords in self._keywords:
            count = sum(1 for k in keywords if k.lower() in compact)
            if query.audience and query.audience in spec.audiences:
                count += 2
            if count:
                hits[spec.name] = count
        # A passing mention ("회사" in a question about a civil servant's side job) does not add a domain.
        top = max(hits.values(), default=0)
        chosen = {name for name, count in hits.items() if count * 2 >= top}
        similarity: dict[str, float] = {}
        if vector is not None and self.embedder is not None and self.specs:
            sims = self._description_vectors() @ np.asarray(vector, dtype=np.float32)
            similarity = {spec.name: round(float(s), 4) for spec, s in zip(self.specs, sims, strict=True)}
            order = np.argsort(-sims)
            best = float(sims[order[0]])
            runner_up = float(sims[order[1]]) if len(order) > 1 else -1.0
            if best >= self.threshold and best - runner_up >= self.margin:
                chosen.add(self.specs[int(order[0])].name)
            # A domain the question's words point to that the vector also ranks among its top two is a second
            # topic ("퇴직금 세금 처리와 해고 절차", "공무원 연가랑 근로자 연차"), not a passing mention.
            for index in order[: self.secondary_rank]:
                name = self.specs[int(index)].name
                if name in hits:
                    chosen.add(name)
        ordered = tuple(s.name for s in self.specs if s.name in chosen)
        return DomainDecision(domains=ordered, keyword_hits=hits, similarity=similarity)

    def _description_vectors(self) -> np.ndarray:
        if self._descriptions is None:
            assert self.embedder is not None
            texts = [s.description or " ".join(s.keywords) for s in self.specs]
            self._descriptions = np.asarray(self.embedder.embed_passages(texts), dtype=np.float32)
        return self._descriptions
