"""Fixtures: a few hand-written regulations (our own sentences) indexed in a temporary chunk store."""

from __future__ import annotations

import pytest
from retrieval_samples import index_chunks, make_chunk

from rag.models import Chunk
from rag.retrieval.corpus import IndexedCorpus


@pytest.fixture
def workplace_rules() -> list[Chunk]:
    """A company rulebook, a labour statute and a civil-service rule, written for these tests."""
    return [
        make_chunk("근로기준법", "제50조", "근로시간",
                   "1주간의 근로시간은 휴게시간을 제외하고 40시간을 초과할 수 없다."),
        make_chunk("근로기준법", "제56조", "연장ㆍ야간 및 휴일 근로",
                   "사용자는 연장근로에 대하여는 통상임금의 100분의 50 이상을 가산하여 지급하여야 한다."),
        make_chunk("근로기준법", "제60조", "연차 유급휴가",
                   "사용자는 1년간 80퍼센트 이상 출근한 근로자에게 15일의 유급휴가를 주어야 한다."),
        make_chunk("근로기준법", "제60조", "연차 유급휴가", "③ 3년 이상 계속 근로한 근로자에게는 휴가를 가산하여 준다.",
                   part=1),
        make_chunk("근로기준법", "제46조", "휴업수당",
                   "사용자의 귀책사유로 휴업하는 경우에는 평균임금의 100분의 70 이상의 수당을 지급하여야 한다."),
        make_chunk("근로기준법", "제23조", "해고 등의 제한",
                   "사용자는 근로자에게 정당한 이유 없이 해고하지 못한다. 제60조에 따른 휴가 중에도 같다."),
        make_chunk("국가공무원 복무규정", "제15조", "연가 일수",
                   "공무원의 재직기간별 연가 일수는 다음과 같다. 6년 이상 21일."),
        make_chunk("국가공무원 복무규정", "제25조", "영리 업무의 금지",
                   "공무원은 영리를 목적으로 하는 업무를 스스로 경영하여서는 아니 된다."),
        make_chunk("국가공무원 복무규정", "제26조", "겸직 허가",
                   "공무원이 다른 직무를 겸하려면 소속 기관의 장의 사전 허가를 받아야 한다."),
        make_chunk("근로기준법 시행령", "제26조", "휴업수당의 산출", "법 제46조제1항에 따라 휴업수당을 산출한다."),
    ]


@pytest.fixture
def rules_corpus(tmp_path, kiwi_tokenizer, workplace_rules) -> IndexedCorpus:
    return index_chunks(tmp_path, kiwi_tokenizer, workplace_rules)
