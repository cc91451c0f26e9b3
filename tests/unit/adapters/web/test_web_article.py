"""The side panel's view of a cited article."""

from adapters.web.article import article_view
from tests.unit.adapters.web.fakes import make_chunk


class TestArticleView:
    def test_parts_are_joined_without_their_repeated_headers(self):
        chunks = [
            make_chunk(text="① 1년 동안 8할 넘게 출근한 직원은 15일을 받는다.\n② 1년 미만이면 한 달에 하루를 받는다."),
            make_chunk(text="③ 근속 2년마다 하루를 더한다.", part=1),
        ]

        view = article_view(chunks)

        assert view is not None
        assert (view.doc, view.article, view.title) == ("취업규칙", "제20조", "연차휴가")
        assert view.chapter == "제4장 휴일과 휴가"
        assert view.lines == (
            "① 1년 동안 8할 넘게 출근한 직원은 15일을 받는다.",
            "② 1년 미만이면 한 달에 하루를 받는다.",
            "③ 근속 2년마다 하루를 더한다.",
        )

    def test_source_link_is_kept_only_for_web_addresses(self):
        assert article_view([make_chunk(text="① 본문")]).url == "https://intranet.example.com/rules/work"
        assert article_view([make_chunk(text="① 본문", url="file:///srv/rules.hwp")]).url == ""

    def test_text_without_articles_keeps_its_first_line(self):
        chunk = make_chunk(article="", text="둘째 줄").model_copy(update={"text": "취업규칙 안내\n둘째 줄"})

        assert article_view([chunk]).lines == ("취업규칙 안내", "둘째 줄")

    def test_no_chunks_is_no_article(self):
        assert article_view([]) is None
