from __future__ import annotations

import pytest

from rag.retrieval.domains import DomainClassifier, DomainSpec, load_domains
from rag.retrieval.query import QueryAnalyzer

SPECS = [
    DomainSpec(name="labor", documents=("근로기준법",), keywords=("회사", "월급", "야근"),
               audiences=("employer",), description="회사 월급"),
    DomainSpec(name="civil_service", documents=("국가공무원 복무규정", "공무원 여비 규정"),
               keywords=("공무원", "출장비"), audiences=("civil_servant",), description="공무원 출장"),
    DomainSpec(name="tax", documents=("국세기본법",), keywords=("세금",), description="세금"),
]


class DirectionEmbedder:
    """Embeds a text as the unit vector of the first domain word it contains (a stand-in for e5)."""

    name = "direction"
    dim = 3
    words = ("월급", "공무원", "세금")

    def _vector(self, text: str) -> list[float]:
        for i, word in enumerate(self.words):
            if word in text:
                return [1.0 if j == i else 0.0 for j in range(3)]
        return [0.58, 0.58, 0.57]

    def embed_passages(self, texts):
        return [self._vector(t) for t in texts]

    def embed_query(self, text):
        return self._vector(text)


@pytest.fixture(scope="module")
def analyzer(kiwi_tokenizer):
    return QueryAnalyzer(kiwi_tokenizer, {}, audiences={"공무원": "civil_servant"})


def test_keywords_pick_the_domain(analyzer, kiwi_tokenizer):
    classifier = DomainClassifier(SPECS, kiwi_tokenizer)
    assert classifier.classify(analyzer.analyze("야근하면 월급 더 줘?")).domains == ("labor",)
    assert classifier.classify(analyzer.analyze("세금 신고 기한")).domains == ("tax",)


def test_a_passing_mention_does_not_add_a_second_domain(analyzer, kiwi_tokenizer):
    question = analyzer.analyze("공무원인데 회사 다니는 친구처럼 출장비 받아?")
    decision = DomainClassifier(SPECS, kiwi_tokenizer).classify(question)
    assert decision.domains == ("civil_service",)
    assert decision.keyword_hits["labor"] == 1


def test_earlier_turn_words_count(analyzer, kiwi_tokenizer):
    analyzed = analyzer.analyze("그럼 6년 넘으면?", context="공무원 연가 며칠이야?")
    assert DomainClassifier(SPECS, kiwi_tokenizer).classify(analyzed).domains == ("civil_service",)


def test_vector_adds_a_domain_only_with_a_clear_lead(analyzer, kiwi_tokenizer):
    classifier = DomainClassifier(SPECS, kiwi_tokenizer, embedder=DirectionEmbedder(), threshold=0.5, margin=0.05)
    clear = classifier.classify(analyzer.analyze("이 돈은 언제 나와?"), vector=[0.0, 0.0, 1.0])
    assert clear.domains == ("tax",)
    unclear = classifier.classify(analyzer.analyze("이 돈은 언제 나와?"), vector=[0.58, 0.58, 0.57])
    assert unclear.domains == ()


def test_unknown_question_has_no_domain(analyzer, kiwi_tokenizer):
    assert DomainClassifier(SPECS, kiwi_tokenizer).classify(analyzer.analyze("안내 좀")).domains == ()


def test_documents_map_to_domains_by_name(kiwi_tokenizer):
    classifier = DomainClassifier(SPECS, kiwi_tokenizer)
    assert classifier.document_domain("근로기준법 시행령") == "labor"
    assert classifier.document_domain("공무원 여비 규정") == "civil_service"
    assert classifier.document_domain("사내 카페 운영 지침") == ""
    assert classifier.document_domain("사내 카페 운영 지침", declared="welfare") == "welfare"


def test_shipped_domains_cover_the_statutes():
    names = {spec.name for spec in load_domains()}
    assert {"labor", "civil_service", "higher_education", "privacy", "tax"} <= names


class BlendEmbedder(DirectionEmbedder):
    """A question about wages and tax lies between the two domains, closer to wages (as e5 puts it)."""

    def embed_query(self, text):
        if "월급" in text and "세금" in text:
            return [0.8, 0.0, 0.6]
        return super().embed_query(text)


def test_a_second_topic_the_vector_also_points_to_keeps_its_domain(analyzer, kiwi_tokenizer):
    classifier = DomainClassifier(SPECS, kiwi_tokenizer, embedder=BlendEmbedder(), threshold=0.5)
    # labor: 회사, 월급, 야근 (3 words) — tax: 세금 (1 word, less than half): kept because the vector agrees.
    query = analyzer.analyze("회사에서 야근한 월급에 붙는 세금은?")
    vector = BlendEmbedder().embed_query(query.all_text)
    assert classifier.classify(query, vector).domains == ("labor", "tax")


def test_a_passing_mention_the_vector_does_not_share_stays_out(analyzer, kiwi_tokenizer):
    classifier = DomainClassifier(SPECS, kiwi_tokenizer, embedder=DirectionEmbedder(), threshold=0.5,
                                  secondary_rank=1)
    query = analyzer.analyze("공무원인데 회사 다니는 친구처럼 출장비 받아?")
    vector = DirectionEmbedder().embed_query(query.all_text)
    assert classifier.classify(query, vector).domains == ("civil_service",)
