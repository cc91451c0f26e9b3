"""Writes the templated half of the page corpus: monthly branch reports that share their wording and differ in
their facts (our own text). Pages like these are where e5 vectors bunch and lexical matching must lead."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
BRANCHES = ["부산", "대구", "광주", "대전", "울산", "수원", "청주", "전주", "창원", "제주"]
MONTHS = [3, 7, 11]
PRODUCTS = ["냉장고", "세탁기", "건조기", "식기세척기", "공기청정기", "제습기", "에어컨", "정수기", "청소기",
            "전자레인지"]
ISSUES = ["물류센터 침수", "배송 차량 부족", "대리점 계약 해지", "전산 장애", "창고 화재 경보", "협력사 파업",
          "고객 정보 문의 급증", "반품 증가", "부품 수급 지연", "인력 이탈"]


def page(b: int, m: int) -> tuple[str, str]:
    branch, month = BRANCHES[b], MONTHS[m]
    product = PRODUCTS[(b + 3 * m) % len(PRODUCTS)]
    issue = ISSUES[(2 * b + m) % len(ISSUES)]
    sales = 40 + (7 * b + 11 * m) % 37
    text = (f"{branch}지사 {month}월 영업 보고. 이번 달 매출은 {sales}억 원으로 지난달과 비슷했다. "
            f"가장 많이 팔린 제품: {product}. 지사 운영에서는 {issue} 문제가 있었다. "
            f"다음 달에는 지역 대리점 교육과 재고 점검을 계획하고 있다.")
    return f"r{b:02d}{m}", text


def main() -> None:
    questions = []
    for b in range(len(BRANCHES)):
        for m in range(len(MONTHS)):
            name, text = page(b, m)
            (HERE / "reports" / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
            branch, month = BRANCHES[b], MONTHS[m]
            questions.append({"question": f"{branch}지사 {month}월에 무슨 문제가 있었어?", "page": name})
    with (HERE / "report_questions.jsonl").open("w", encoding="utf-8") as handle:
        for q in questions:
            handle.write(json.dumps(q, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
