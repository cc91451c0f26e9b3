"""The shape of the house, read from the code (issue 27): small modules, Korean regexes in the language home, the
reference grammar written once. Import cycles are checked in `test_import_contracts.py`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rag", "bot", "adapters", "benchmarks", "scripts")
LANG_HOME = ROOT / "rag" / "lang"
HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
# A regex that reads an article number: 제 … a digit class … 조.
ARTICLE_GRAMMAR = re.compile(r"제.{0,40}(\\d|\[0-9).{0,40}조")
MAX_LINES = 450
MAX_KOREAN_REGEXES_OUTSIDE_HOME = 8


def sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def regex_literals(path: Path) -> list[tuple[int, str]]:
    """Literal patterns handed to a `re` function: (line, pattern)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
            pattern = node.args[0]
            if isinstance(pattern, ast.Constant) and isinstance(pattern.value, str):
                found.append((node.lineno, pattern.value))
            elif isinstance(pattern, ast.JoinedStr):
                found.append((node.lineno, ast.unparse(pattern)))
    return found


def test_no_module_is_over_450_lines():
    long = {str(p.relative_to(ROOT)): n for p in sources()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_korean_regexes_live_in_the_language_home():
    outside = [f"{p.relative_to(ROOT)}:{line}" for p in sources() if not p.is_relative_to(LANG_HOME)
               for line, pattern in regex_literals(p) if HANGUL.search(pattern)]
    assert len(outside) <= MAX_KOREAN_REGEXES_OUTSIDE_HOME, outside


def test_the_reference_grammar_is_written_once():
    writers = sorted({str(p.relative_to(ROOT)) for p in sources()
                      for _, pattern in regex_literals(p) if ARTICLE_GRAMMAR.search(pattern)})
    assert writers == ["rag/lang/reference.py"]


@pytest.mark.parametrize(("source", "korean", "grammar"), [
    ('re.compile(r"제(\\d+)조")', True, True),
    ('re.search("연차|휴가", text)', True, False),
    ('re.compile(r"\\s+")', False, False),
])
def test_the_readers_see_what_they_count(tmp_path, source, korean, grammar):
    module = tmp_path / "m.py"
    module.write_text(f"import re\nx = {source}\n", encoding="utf-8")
    [(line, pattern)] = regex_literals(module)
    assert line == 2
    assert bool(HANGUL.search(pattern)) is korean
    assert bool(ARTICLE_GRAMMAR.search(pattern)) is grammar
