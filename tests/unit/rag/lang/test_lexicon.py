"""An operator's vocabulary (rag/lang/lexicon.py, rag/stages/vocabulary.py): the package's data files extended by a
deployment's lexicon folder, never edited in place."""

from pathlib import Path

import pytest

from rag.lang.lexicon import Lexicon, LexiconError
from rag.retrieval.names import load_aliases
from rag.retrieval.query import load_synonyms
from rag.stages.vocabulary import KnownWords, Vocabulary


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_package_file_comes_first_then_the_deployments_in_name_order(tmp_path):
    second = write(tmp_path, "synonyms-b.yaml", "terms: {}\n")
    first = write(tmp_path, "synonyms-a.yaml", "terms: {}\n")
    write(tmp_path, "aliases.yaml", "{}\n")

    files = Lexicon(tmp_path).files("synonyms")

    assert files[1:] == (first, second) and files[0].parent.name == "data"


def test_without_a_folder_only_the_package_files_are_read(tmp_path):
    assert Lexicon(tmp_path / "missing").extras("synonyms") == () and Lexicon(None).extras("aliases") == ()


def test_a_deployments_synonyms_join_the_packages_for_the_same_word(tmp_path):
    write(tmp_path, "synonyms-hr.yaml", "terms:\n  야근: [시간외근무]\n  리프레시: [안식휴가]\n")

    synonyms = Lexicon(tmp_path).load_list_mapping("synonyms", load_synonyms)

    assert synonyms["야근"][:2] == ["연장근로", "야간근로"] and synonyms["야근"][-1] == "시간외근무"
    assert synonyms["리프레시"] == ["안식휴가"]


def test_a_bad_extra_file_is_one_error_naming_it(tmp_path):
    bad = write(tmp_path, "aliases-team.yaml", "근기법: [unclosed\n")

    with pytest.raises(LexiconError, match=str(bad)):
        Lexicon(tmp_path).load_mapping("aliases", load_aliases)


def test_a_bad_cue_pattern_in_an_extra_file_names_it(tmp_path):
    bad = write(tmp_path, "changes-x.yaml", "patterns:\n  - '규정\\s*변경'\n  - '(unclosed'\n")

    with pytest.raises(LexiconError, match=rf"{bad.parent}/changes-x.yaml:3: pattern '\(unclosed'"):
        Vocabulary.load(Lexicon(tmp_path))


def test_the_vocabulary_carries_a_deployments_aliases_cues_and_words(tmp_path):
    write(tmp_path, "aliases-org.yaml", "복규: 복무 규정\n")
    write(tmp_path, "changes-org.yaml", "patterns: ['규정\\s*변경\\s*이력']\nexamples: ['복무 규정 변경 이력']\n")
    write(tmp_path, "question_core-org.yaml",
          "fillers:\n  - word: 문의드림\n    examples: ['연차 문의드림']\n")

    words = Vocabulary.load(Lexicon(tmp_path))

    assert words.aliases["복규"] == "복무 규정" and words.aliases["근기법"] == "근로기준법"
    assert words.change_cues.asks("복무 규정 변경 이력 보여줘")
    assert "문의드림" in words.question_cues.filler_words and words.question_cues.asks  # the package's cues kept
    assert words.knows("복규") and words.knows("연장근로") and not words.knows("주차장")


def test_the_words_neither_the_index_nor_the_vocabulary_knows():
    known = KnownWords(["주차", "요금"], Vocabulary.load(Lexicon(None)))

    assert known.unknown([("주차장", "요금"), ("주차장", "셔틀"), ("야근",)]) == [("주차장", 2), ("셔틀", 1)]


def test_the_vocabularys_glossary_keeps_the_function_words():
    glossary = Vocabulary.load(Lexicon(None)).glossary

    assert glossary.read("What can I do?").unread == 0.0  # every word a function word: nothing left unread


def test_the_vocabularys_glossary_keeps_the_follow_up_cues():
    assert Vocabulary.load(Lexicon(None)).glossary.leans_on_history("And if he says no?")
