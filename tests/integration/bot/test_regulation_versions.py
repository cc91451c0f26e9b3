"""Versions end to end on a copy of samples/ (and samples_law/ as the `law` collection, as scripts/demo.sh ingests
them): an amended article is listed by `regbot changes`, answered from in chat, and quoted with its amendment date;
a future effective date holds the new text back until that date (a fixed clock moves it there)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pytest

from bot.app import Components, build_components
from bot.cli import cli
from rag.knowledge.store import ChunkStore
from rag.models import Scope
from rag.pipeline import collect
from testkit import REPO_ROOT, SAMPLES, HashingEmbedder, make_settings
from tests.fakes.clock import FakeClock

TODAY = datetime(2026, 11, 28, 12, 0).timestamp()
LEAVE_QUESTION = "입사 1년 지나면 연차 며칠 받아?"


class Library:
    """A copy of the samples, its data dir, the components over it and a clock the test moves."""

    def __init__(self, root: Path, tokenizer, *, law: bool = True) -> None:
        self.docs = root / "samples"
        self.law = root / "samples_law"
        shutil.copytree(SAMPLES, self.docs)
        if law:
            shutil.copytree(REPO_ROOT / "samples_law", self.law)
        self.clock = FakeClock(TODAY)
        self.components: Components = build_components(make_settings(root / "data"), embedder=HashingEmbedder(),
                                                       tokenizer=tokenizer, clock=self.clock)
        self.ingest()

    @property
    def rules(self) -> Path:
        return self.docs / "취업규칙.md"

    def edit(self, path: Path, *replacements: tuple[str, str]) -> None:
        text = path.read_text(encoding="utf-8")
        for old, new in replacements:
            assert old in text, old
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")

    def amend_leave(self, effective: str) -> None:
        self.edit(self.rules, ("15일의 연차유급휴가", "16일의 연차유급휴가"),
                  ("시행일자: 2026-03-01", f"시행일자: {effective}"))

    def ingest(self) -> list:
        ingestor = self.components.ingestor()
        outcomes = ingestor.ingest([self.docs]).outcomes
        if self.law.exists():
            outcomes += ingestor.ingest([self.law], collection="law").outcomes
        self.components.corpus.refresh()
        return outcomes

    def cli(self, capsys, *argv: str) -> tuple[int, str]:
        code = cli.main(["--data-dir", str(self.components.settings.data_dir), *argv],
                        build_components=lambda settings: self.components)
        return code, capsys.readouterr().out

    def cli_json(self, capsys, *argv: str) -> dict:
        code, out = self.cli(capsys, *argv, "--json")
        assert code == 0
        return json.loads(out)

    def ask(self, question: str, scope: Scope | None = None) -> str:
        answer, _ = asyncio.run(collect(self.components.pipeline, question, scope=scope))
        assert answer is not None
        return answer.text


@pytest.fixture
def library(tmp_path, kiwi_tokenizer) -> Library:
    return Library(tmp_path, kiwi_tokenizer)


class TestAnAmendmentInForce:
    @pytest.fixture
    def amended(self, library) -> Library:
        library.amend_leave("2026-11-01")
        library.ingest()
        return library

    def test_changes_json_lists_the_article_with_the_old_and_new_figures(self, amended, capsys):
        data = amended.cli_json(capsys, "changes")
        [change] = data["changes"]
        assert set(change) == {"doc", "from_version", "to_version", "ingested_at", "effective", "articles"}
        assert (change["doc"], change["from_version"], change["to_version"], change["effective"]) == \
            ("취업규칙", 1, 2, "2026-11-01")
        [article] = change["articles"]
        assert set(article) == {"article", "change", "before", "after"}
        assert (article["article"], article["change"]) == ("제20조", "changed")
        assert "15일" in article["before"] and "16일" in article["after"]
        assert "15일" not in article["after"]

    def test_changes_filters_by_document_and_date(self, amended, capsys):
        assert amended.cli_json(capsys, "changes", "--doc", "복무 규정")["changes"] == []
        assert len(amended.cli_json(capsys, "changes", "--doc", "취업 규칙")["changes"]) == 1
        assert amended.cli_json(capsys, "changes", "--since", "2026-12-01")["changes"] == []
        assert len(amended.cli_json(capsys, "changes", "--since", "2026-11-01")["changes"]) == 1

    def test_the_terminal_form_marks_the_changed_words(self, amended, capsys):
        code, out = amended.cli(capsys, "changes")
        assert code == 0
        assert "취업규칙" in out and "제20조(연차유급휴가) 제1항" in out
        assert "[-15일의-] {+16일의+}" in out

    def test_asking_for_the_change_history_is_a_lookup_naming_the_article_and_new_figure(self, amended, capsys):
        answer = amended.cli_json(capsys, "ask", "취업규칙 개정 내역")
        assert answer["route"] == "lookup"
        assert answer["answer"].startswith("**취업규칙 개정 내역**")
        assert "제20조" in answer["answer"] and "16일" in answer["answer"] and "2026-11-01 시행" in answer["answer"]
        assert [(c["doc"], c["article"]) for c in answer["citations"]] == [("취업규칙", "제20조")]
        assert answer["followups"] == ["취업규칙 제20조"]  # the article as it reads now, one tap away

    @pytest.mark.parametrize("question", ["취업규칙 뭐가 바뀌었어?", "최근에 바뀐 규정 있어?"])
    def test_other_ways_of_asking_are_lookups_of_the_same_change(self, amended, capsys, question):
        answer = amended.cli_json(capsys, "ask", question)
        assert answer["route"] == "lookup"
        assert "제20조" in answer["answer"] and answer["citations"][0]["article"] == "제20조"

    def test_the_leave_answer_quotes_the_new_text_and_notes_the_amendment(self, amended, capsys):
        answer = amended.cli_json(capsys, "ask", LEAVE_QUESTION)["answer"]
        company, _, law = answer.partition("관련 법령:")
        assert "16일" in company.split("\n")[0] and "15일" not in company
        assert "※ 취업규칙 제20조: 2026-11-01 개정" in answer
        assert "근로기준법(예시)" in law  # the statute's minimum (15일) is quoted as the law, not as the rule

    def test_over_the_samples_alone_the_leave_answer_has_only_the_new_figure(self, tmp_path, kiwi_tokenizer, capsys):
        library = Library(tmp_path, kiwi_tokenizer, law=False)
        library.amend_leave("2026-11-01")
        library.ingest()
        answer = library.cli_json(capsys, "ask", LEAVE_QUESTION)["answer"]
        assert answer.startswith("1년간 80퍼센트 이상 출근한 직원에게는 16일의 연차유급휴가를 준다. [1]")
        assert "15일" not in answer and "※ 취업규칙 제20조: 2026-11-01 개정" in answer

    def test_an_amendment_older_than_the_recent_window_is_not_noted(self, amended):
        amended.clock.now = datetime(2027, 3, 1, 12).timestamp()  # 120 days after the effective date
        text = amended.ask(LEAVE_QUESTION)
        assert "16일" in text and "개정" not in text

    def test_a_change_in_a_collection_the_scope_cannot_see_is_not_shown(self, amended):
        amended.edit(amended.law / "근로기준법_예시.md", ("시행일자: 2025-01-01", "시행일자: 2026-10-01"),
                     ("30일 전에", "40일 전에"))
        amended.ingest()
        assert "근로기준법" in amended.ask("최근에 바뀐 규정 있어?")
        company_only = amended.ask("최근에 바뀐 규정 있어?", scope=Scope(collections=("default",)))
        assert "취업규칙" in company_only and "근로기준법" not in company_only
        law_only = amended.ask("최근에 바뀐 규정 있어?", scope=Scope(collections=("law",)))
        assert "근로기준법" in law_only and "취업규칙" not in law_only

    def test_prune_deletes_superseded_versions_and_their_changes(self, amended, capsys):
        code, out = amended.cli(capsys, "changes", "--prune-before", "2099-01-01")
        assert code == 0 and "pruned 1 superseded version" in out
        assert amended.cli_json(capsys, "changes")["changes"] == []
        assert "16일" in amended.ask(LEAVE_QUESTION)  # the version in force stays


class TestAFutureEffectiveDate:
    def test_the_old_text_stays_in_force_until_the_date_and_the_answer_says_when_it_changes(self, library, capsys):
        library.amend_leave("2027-01-01")
        [rules] = [o for o in library.ingest() if o.doc == "취업규칙"]
        assert rules.status == "updated" and "held" in rules.reason
        before = library.ask(LEAVE_QUESTION)
        assert "15일" in before.split("\n")[0] and "16일" not in before
        assert "※ 취업규칙 제20조: 개정되어 2027-01-01부터 시행 예정" in before
        [change] = library.cli_json(capsys, "changes")["changes"]
        assert change["effective"] == "2027-01-01" and "16일" in change["articles"][0]["after"]
        history = library.cli_json(capsys, "ask", "취업규칙 개정 내역")["answer"]
        assert "2027-01-01부터 시행 예정" in history

        library.clock.now = datetime(2027, 1, 1, 9).timestamp()
        after = library.ask(LEAVE_QUESTION).partition("관련 법령:")[0]
        assert "16일" in after.split("\n")[0] and "15일" not in after

    def test_re_ingesting_the_held_version_unchanged_keeps_it_held(self, library):
        library.amend_leave("2027-01-01")
        library.ingest()
        [rules] = [o for o in library.ingest() if o.doc == "취업규칙"]
        assert rules.status == "unchanged"
        assert "15일" in library.ask(LEAVE_QUESTION)


class TestVersionsRecorded:
    def test_an_unchanged_re_ingest_records_no_version(self, library, capsys):
        library.edit(library.rules, ("# 취업규칙\n", "# 취업규칙\n\n"))  # the file changes, its text does not
        outcomes = library.ingest()
        assert any(o.doc == "취업규칙" and o.status == "updated" for o in outcomes)
        versions = library.components.store.versions()
        assert [v.version for v in versions if v.doc == "취업규칙"] == [1]
        assert library.cli_json(capsys, "changes")["changes"] == []

    def test_a_renumbered_article_is_recognised(self, library, capsys):
        library.edit(library.rules, ("##### 제23조 (병가)", "##### 제24조 (병가)"),
                     ("##### 제22조 (경조휴가)", "##### 제22조 (육아휴가)\n\n만 8세 이하 자녀를 둔 직원에게는 연 2일의 "
                      "육아휴가를 준다.\n\n##### 제23조 (경조휴가)"))
        library.ingest()
        [change] = library.cli_json(capsys, "changes")["changes"]
        assert [(a["article"], a["change"]) for a in change["articles"]] == [
            ("제22조", "added"), ("제23조", "changed"), ("제24조", "changed")]
        moved = change["articles"][1]
        assert moved["before"].startswith("제22조(경조휴가)") and moved["after"].startswith("제23조(경조휴가)")

    def test_a_data_dir_from_before_versions_gets_its_text_as_version_one(self, library, capsys):
        index = library.components.settings.data_dir / "index.sqlite"
        with closing(sqlite3.connect(index)) as db, db:  # as a data dir written before versions were kept
            db.execute("DROP TABLE versions")
            db.execute("DELETE FROM meta WHERE key = 'versions_backfilled'")
        store = ChunkStore(index)
        documents = ["취업규칙", "복무 규정", "여비 규정", "근로기준법(예시)"]
        assert sorted(v.doc for v in store.versions()) == sorted(documents)
        library.components.store = store
        library.amend_leave("2026-11-01")
        library.ingest()
        [change] = library.cli_json(capsys, "changes")["changes"]
        assert change["articles"][0]["article"] == "제20조"
