from rag.knowledge.chunker import ArticleChunker
from rag.knowledge.loaders.base import LoadedDocument
from rag.knowledge.parser import RegulationParser

MARKDOWN = """
# 연구소 보안 지침

## 제1장 총칙

##### 제1조 (목적)

이 지침은 연구소의 보안 관리에 필요한 사항을 정한다.

##### 제2조 (출입 관리)

**①** 연구실에는 출입증을 가진 사람만 들어갈 수 있다. <개정 2025.2.1>

**②** 방문객은 보안 담당자와 함께 출입한다.

##### 제2조의2 (반출 승인)

장비를 반출하려면 부서장의 승인을 받아야 한다.

## 제2장 점검

##### 제3조

삭제 <2024.1.1>

##### 제4조 (정기 점검)

보안 점검은 분기마다 실시한다.

## 부칙

부칙 <2025.2.1>

제1조(시행일) 이 지침은 2025년 2월 1일부터 시행한다.

제2조(경과조치) 종전 출입증은 2025년 6월 30일까지 쓸 수 있다.
"""

PLAIN = """연구소 보안 지침
제1장 총칙
제1조(목적) 이 지침은 연구소의 보안 관리에 필요한 사항을 정한다.
제2조(출입 관리) ① 연구실에는 출입증을 가진 사람만 들어갈 수 있다.
② 제1조에 따른 방문객은 보안 담당자와 함께 출입한다.
제2조제1항의 출입증은 인사팀이 발급한다.
제3조(정기 점검) 보안 점검은 분기마다 실시한다.
"""


def parse(text: str, markdown: bool = True, front_matter: dict | None = None):
    loaded = LoadedDocument(path="x.md", format="md", text=text, title="연구소 보안 지침",
                            front_matter=front_matter or {}, markdown_headings=markdown)
    return RegulationParser().parse(loaded, fallback_name="x")


def test_parser_keeps_branch_articles_as_their_own_articles():
    labels = [a.article for a in parse(MARKDOWN).articles if a.kind == "article"]
    assert labels == ["제1조", "제2조", "제2조의2", "제3조", "제4조"]


def test_parser_reads_paragraph_markers_and_chapter_path():
    article = next(a for a in parse(MARKDOWN).articles if a.article == "제2조")
    assert [p.marker for p in article.paragraphs] == ["①", "②"]
    assert article.chapter == "제1장"
    assert article.title == "출입 관리"


def test_parser_marks_deleted_articles():
    article = next(a for a in parse(MARKDOWN).articles if a.article == "제3조")
    assert article.deleted
    assert not next(a for a in parse(MARKDOWN).articles if a.article == "제4조").deleted


def test_parser_keeps_addenda_articles_inside_their_block():
    addenda = [a for a in parse(MARKDOWN).articles if a.kind == "addenda"]
    assert len(addenda) == 1
    assert addenda[0].title == "부칙 <2025.2.1>"
    assert [p.marker for p in addenda[0].paragraphs] == ["제1조", "제2조"]


def test_parser_reads_plain_text_without_mistaking_references_for_headers():
    articles = [a for a in parse(PLAIN, markdown=False).articles if a.kind == "article"]
    assert [a.article for a in articles] == ["제1조", "제2조", "제3조"]
    second = articles[1]
    assert "제2조제1항의 출입증" in second.body
    assert second.chapter == "제1장"


def test_parser_indexes_annexes_from_front_matter():
    front = {"첨부파일": [{"별표번호": "0002", "별표가지번호": "00", "별표구분": "별표", "제목": "점검표",
                          "파일링크": "https://example.com/a2.pdf"}]}
    annex = next(a for a in parse(MARKDOWN, front_matter=front).articles if a.kind == "annex")
    assert annex.article == "별표 2"
    assert "https://example.com/a2.pdf" in annex.body


def test_chunker_repeats_article_header_in_each_part():
    long_paragraphs = "\n\n".join(f"**{m}** " + "출입 기록은 보안 담당자가 매일 확인하고 보관한다. " * 6
                                  for m in "①②③④")
    text = MARKDOWN.replace("**②** 방문객은 보안 담당자와 함께 출입한다.", long_paragraphs)
    chunks = [c for c in ArticleChunker(max_chars=300).chunk(parse(text)) if c.article == "제2조"]
    assert len(chunks) > 1
    assert all(c.text.startswith("연구소 보안 지침 제2조(출입 관리)\n") for c in chunks)
    assert [c.part for c in chunks] == list(range(len(chunks)))
    assert all(len(c.text) <= 300 for c in chunks)


def test_chunk_ids_are_stable_across_runs_and_change_with_collection():
    first = ArticleChunker().chunk(parse(MARKDOWN))
    again = ArticleChunker().chunk(parse(MARKDOWN))
    other = ArticleChunker().chunk(parse(MARKDOWN), collection="hr")
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    assert not {c.chunk_id for c in first} & {c.chunk_id for c in other}


def test_chunker_keeps_markup_remnants_out_of_chunk_text_but_keeps_the_table():
    text = """
# 복무 지침

##### 제5조 (연가 일수)

**①** 연가 일수는 다음과 같다.

\t\t\t\t<img src="http://example.org/f?seq=1"  alt="img1" >

\t\t\t\t│재직기간 │연가 일수 │

\t\t\t\t│1년 이상 │15        │

\t\t\t\t</img>

**②** 삭제 &lt;2007.11.13&gt; 연구원 &amp; 직원은 <개정 2025.2.1> 같다.
"""
    [chunk] = ArticleChunker().chunk(parse(text))
    assert "<img" not in chunk.text and "</img>" not in chunk.text and "&lt;" not in chunk.text
    assert "│1년 이상 │15" in chunk.text
    assert "삭제 <2007.11.13> 연구원 & 직원은 <개정 2025.2.1> 같다." in chunk.text


def parse_titled(title: str, front_matter: dict | None = None, fallback: str = "x"):
    loaded = LoadedDocument(path="x.md", format="md", text=MARKDOWN, title=title,
                            front_matter=front_matter or {}, markdown_headings=True)
    return RegulationParser().parse(loaded, fallback_name=fallback)


def test_rule_code_comes_from_the_front_matter_and_reaches_every_chunk():
    parsed = parse_titled("연구소 보안 지침", {"규정번호": "제2-3-7호"})
    assert (parsed.doc, parsed.rule_code) == ("연구소 보안 지침", "2-3-7")
    assert {c.rule_code for c in ArticleChunker().chunk(parsed)} == {"2-3-7"}


def test_rule_code_in_the_title_is_split_from_the_name():
    assert (parse_titled("3-1-24 여비규정").doc, parse_titled("3-1-24 여비규정").rule_code) == ("여비규정", "3-1-24")
    parsed = parse_titled("여비 규정(제3-1-24호)")
    assert (parsed.doc, parsed.rule_code) == ("여비 규정", "3-1-24")
    parsed = parse_titled("", fallback="4-2 복무규정")
    assert (parsed.doc, parsed.rule_code) == ("복무규정", "4-2")


def test_a_title_without_a_code_keeps_its_name_and_no_code():
    parsed = parse_titled("2025년 연구소 보안 지침")
    assert (parsed.doc, parsed.rule_code) == ("2025년 연구소 보안 지침", "")
