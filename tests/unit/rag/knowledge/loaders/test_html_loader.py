"""HtmlLoader: block elements become lines; page chrome is dropped; encodings of Korean sites."""

from __future__ import annotations

import pytest

from rag.errors import IngestError
from rag.knowledge.loaders.html import HtmlLoader
from tests.unit.rag.knowledge.loaders.document_factories import write

PAGE = """<!DOCTYPE html>
<html lang="ko">
<head>
  <meta charset="utf-8">
  <title>한빛 취업규칙</title>
  <style>p { color: red }</style>
  <script>var menu = "제99조(가짜) 스크립트";</script>
</head>
<body>
  <nav><a href="/">홈</a> <a href="/rules">규정 목록</a></nav>
  <h1>한빛 취업규칙</h1>
  <h2>제1장 총칙</h2>
  <p>제1조(목적) 이 규칙은 주식회사 한빛 직원의
     근무 조건과 복무 질서를 정한다.</p>
  <div>제2조(적용 범위) ① 이 규칙은 모든 직원에게 적용한다.<br>② 정하지 않은 사항은 법령에 따른다.</div>
  <table>
    <caption>휴가 일수</caption>
    <tr><th>구분</th><th>일수</th></tr>
    <tr><td>연차휴가</td><td>15일</td></tr>
  </table>
  <ol><li>첫째 항목</li><li>둘째 항목</li></ol>
  <p>부칙 &lt;2025. 1. 1.&gt;</p>
</body>
</html>
"""


class TestHtmlLoader:
    def test_block_elements_become_lines_and_chrome_is_dropped(self, tmp_path):
        loaded = HtmlLoader().load(write(tmp_path, "rules.html", PAGE))

        assert loaded.format == "html"
        assert loaded.title == "한빛 취업규칙"
        assert loaded.text.splitlines() == [
            "한빛 취업규칙",
            "제1장 총칙",
            "제1조(목적) 이 규칙은 주식회사 한빛 직원의 근무 조건과 복무 질서를 정한다.",
            "제2조(적용 범위) ① 이 규칙은 모든 직원에게 적용한다.",
            "② 정하지 않은 사항은 법령에 따른다.",
            "휴가 일수",
            "구분 | 일수",
            "연차휴가 | 15일",
            "1. 첫째 항목",
            "2. 둘째 항목",
            "부칙 <2025. 1. 1.>",
        ]

    def test_euc_kr_page_is_decoded_from_its_meta_charset(self, tmp_path):
        page = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=euc-kr"></head>' \
               "<body><p>제1조(목적) 이 규칙은 근무 조건을 정한다.</p></body></html>"
        loaded = HtmlLoader().load(write(tmp_path, "old.htm", page.encode("cp949")))
        assert loaded.text == "제1조(목적) 이 규칙은 근무 조건을 정한다."

    def test_first_heading_is_the_title_when_there_is_no_title_element(self, tmp_path):
        page = "<html><body><h1>출장 규정</h1><p>제1조(목적) 출장 절차를 정한다.</p></body></html>"
        assert HtmlLoader().load(write(tmp_path, "trip.html", page)).title == "출장 규정"

    def test_preformatted_text_keeps_its_lines(self, tmp_path):
        page = "<html><body><pre>제1조(목적) 첫 줄\n제2조(정의) 둘째 줄</pre></body></html>"
        loaded = HtmlLoader().load(write(tmp_path, "pre.html", page))
        assert loaded.text.splitlines() == ["제1조(목적) 첫 줄", "제2조(정의) 둘째 줄"]

    def test_page_without_visible_text_is_reported(self, tmp_path):
        page = "<!doctype html><html><head><script>var x = 1;</script></head><body><nav>메뉴</nav></body></html>"
        with pytest.raises(IngestError, match=r"^menu\.html: the HTML page has no visible text$"):
            HtmlLoader().load(write(tmp_path, "menu.html", page))

    @pytest.mark.parametrize("head", [b"<!DOCTYPE html>", b"\xef\xbb\xbf  <html lang='ko'>", b"<!-- saved -->\n<HTML>"])
    def test_sniff_recognises_html(self, head):
        assert HtmlLoader().sniff(head + b"<body></body>")

    def test_sniff_rejects_markdown_with_inline_html(self):
        assert not HtmlLoader().sniff(b"# \xec\xb7\xa8\xec\x97\x85\xea\xb7\x9c\xec\xb9\x99\n<div>note</div>")
