"""Every regex of the product, run against generated worst cases under a time bound (issue 28).

Questions, mentions, model output and documents are a stranger's text: a pattern that backtracks badly on them
blocks the event loop (64 KB of unclosed `<at>` held it 4.5 s) or an ingest (26 `<!---->` took 23 s). The
patterns are collected, not listed, so the next one cannot slip in:
- every compiled pattern held by a module or a class of `rag`, `adapters` and `bot` (imported);
- every `re.<function>("literal", …)` call in their source (read with `ast`).

Each pattern meets inputs of about 20 K characters built from its own literals (each repeated, each adjacent
pair repeated: `<at>`, `<!---->`, `제1조 제1조 …`), unclosed brackets and tags, and runs of whitespace, Hangul,
digits and punctuation. A linear pattern scans such an input in milliseconds; a quadratic one needs seconds.
The runs happen in a child process that reports each one, so an exponential pattern fails the test by name
instead of hanging it.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import multiprocessing
import pkgutil
import re
import time
from collections.abc import Iterator
from pathlib import Path
from re import _parser as sre_parse  # type: ignore[attr-defined]

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rag", "adapters", "bot")
INPUT_CHARS = 20_000
# CPU seconds for one scan of one input. Most patterns take about a millisecond here, the slowest linear ones
# (a window bounded at 500 characters) about 0.1 s; `<at>(.*?)</at>` takes 0.45 s on 20 K characters of
# unclosed tags (4.5 s on 64 KB), the old lookup filler never finished.
CPU_BOUND_S = 0.25
# Wall seconds the parent waits for one run before it calls the pattern hung (a loaded CI machine included).
HANG_S = 20.0

_FILLERS = (" ", "\n", " \n", "\t", "가", "일", "1", "1 ", ".", ". ", "-", "<", "(", "[", "a", "\u3000", "\"\\")
_GENERIC = ("가나다 ", "제1조 ", "<a ", "&amp;", "](", "① ")


def _modules() -> Iterator[str]:
    for package in PACKAGES:
        yield package
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            yield info.name


def _compiled_patterns() -> dict[str, re.Pattern]:
    """Patterns held by a module or one of its classes, by `module.NAME`."""
    found: dict[str, re.Pattern] = {}
    for name in _modules():
        module = importlib.import_module(name)
        holders = [(name, vars(module))] + [
            (f"{name}.{cls_name}", vars(cls)) for cls_name, cls in vars(module).items()
            if isinstance(cls, type) and cls.__module__ == name
        ]
        for prefix, namespace in holders:
            for attr, value in namespace.items():
                if isinstance(value, re.Pattern):
                    found[f"{prefix}.{attr}"] = value
    return found


_RE_FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}


def _literal_call_patterns() -> dict[str, re.Pattern]:
    """Patterns written inline, `re.sub(r"…", …)`, with their flags when given as `re.X` constants."""
    found: dict[str, re.Pattern] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                        and node.func.attr in _RE_FUNCTIONS and node.args
                        and isinstance(node.args[0], ast.Constant)
                        and isinstance(node.args[0].value, str | bytes)):
                    continue
                flags = 0
                for keyword in node.keywords:
                    if keyword.arg == "flags":
                        flags = _flags_of(keyword.value)
                if node.func.attr == "compile" and len(node.args) > 1:
                    flags = _flags_of(node.args[1])
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found[where] = re.compile(node.args[0].value, flags)
    return found


def _data_patterns() -> dict[str, re.Pattern]:
    """Patterns the language home's data files hold (cues, units), compiled by their loaders."""
    from rag.lang.asks import AskTable
    from rag.lang.cues import cues_of
    from rag.stages.changes import ChangeCues
    from rag.stages.question_core import QuestionCues

    found = {f"rag/data/asks.yaml:{'.'.join(map(str, loc))}": cue.compiled for loc, cue in cues_of(AskTable.load())}
    found.update({f"rag/data/changes.yaml:{n}": p for n, p in enumerate(ChangeCues().patterns)})
    cues = QuestionCues.load()
    for section in ("sentence_breaks", "asks", "situation_ends"):
        found.update({f"rag/data/question_core.yaml:{section}.{n}": c.compiled
                      for n, c in enumerate(getattr(cues, section))})
    return found


def _flags_of(node: ast.expr) -> int:
    names = [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)]
    return sum(int(getattr(re, name, 0)) for name in set(names))


def _literals(pattern: re.Pattern) -> list[str]:
    """The literal runs of a pattern in order (`<at>(.*?)</at>` → `<at>`, `</at>`), one member per set."""
    runs: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    def walk(items) -> None:
        for op, value in items:
            name = str(op)
            if name == "LITERAL":
                current.append(chr(value))
                continue
            close()
            if name == "IN":
                members = [chr(v) for o, v in value if str(o) == "LITERAL"]
                ranges = [chr(v[0]) for o, v in value if str(o) == "RANGE"]
                runs.extend((members + ranges)[:3])
            elif name in ("SUBPATTERN",):
                walk(value[-1])
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                walk(value[-1])
            elif name == "BRANCH":
                for branch in value[1]:
                    walk(branch)
                    close()
            elif name in ("ATOMIC_GROUP", "ASSERT", "ASSERT_NOT"):
                walk(value[-1] if name != "ATOMIC_GROUP" else value)
        close()

    source = pattern.pattern if isinstance(pattern.pattern, str) else pattern.pattern.decode("latin-1")
    walk(sre_parse.parse(source, pattern.flags & ~re.UNICODE if isinstance(pattern.pattern, bytes) else pattern.flags))
    return [r for r in dict.fromkeys(runs) if r]


def worst_cases(pattern: re.Pattern) -> dict[str, str]:
    """Inputs of about INPUT_CHARS characters meant to make `pattern` backtrack, each ending in junk."""
    literals = _literals(pattern)[:8]
    units: dict[str, str] = {}
    for literal in literals:
        units[f"repeat {literal!r}"] = literal
        units[f"repeat {literal + ' '!r}"] = literal + " "
    for first, second in itertools.pairwise(literals):
        units[f"repeat {first + second!r}"] = first + second
    if literals:
        units["all literals"] = "".join(literals)
    for filler in _FILLERS + _GENERIC:
        units.setdefault(f"repeat {filler!r}", filler)
    return {label: unit * max(1, INPUT_CHARS // len(unit)) + "\x00!" for label, unit in units.items()}


def all_patterns() -> dict[str, re.Pattern]:
    """Each distinct pattern once, by the first place that holds it."""
    unique: dict[tuple, tuple[str, re.Pattern]] = {}
    for name, pattern in {**_compiled_patterns(), **_literal_call_patterns(), **_data_patterns()}.items():
        unique.setdefault((pattern.pattern, pattern.flags), (name, pattern))
    return dict(unique.values())


def _scan(pattern: re.Pattern, text: str) -> None:
    data: str | bytes = text.encode("utf-8") if isinstance(pattern.pattern, bytes) else text
    for _ in pattern.finditer(data):
        pass


def _worker(connection) -> None:
    for name, pattern in sorted(all_patterns().items()):
        for label, text in worst_cases(pattern).items():
            connection.send(("start", name, label))
            started = time.process_time()
            _scan(pattern, text)
            connection.send(("done", name, label, time.process_time() - started))
    connection.send(("end",))


def test_patterns_are_collected_from_every_untrusted_text_path() -> None:
    names = set(all_patterns())

    # The router, lookup and query parsing, the loaders and each adapter are among them.
    for expected in ("rag.stages.", "rag.retrieval.", "rag.knowledge.loaders.", "adapters.teams.inbound",
                     "adapters.text", "adapters.slack."):
        assert any(name.startswith(expected) for name in names), expected
    assert any(":" in name for name in names)  # inline `re.sub(r"…")` calls too
    assert len(names) > 100


def test_worst_case_literal_extraction_finds_unclosed_tags() -> None:
    cases = worst_cases(re.compile(r"<at>(.*?)</at>"))
    html = worst_cases(re.compile(rb"(?:<!--.*?-->\s*)*<html", re.S))

    assert cases["repeat '<at>'"].startswith("<at><at><at>")
    assert html["repeat '<!---->'"].startswith("<!----><!---->")


def test_a_quadratic_pattern_is_caught() -> None:
    pattern = re.compile(r"<at>(.*?)</at>", re.DOTALL)
    text = worst_cases(pattern)["repeat '<at>'"] * 2  # twice as long: the bound holds on a faster machine too

    started = time.process_time()
    _scan(pattern, text)

    assert time.process_time() - started > CPU_BOUND_S  # the bound separates this from linear patterns


def test_every_pattern_is_linear_on_worst_cases() -> None:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe(duplex=False)
    worker = context.Process(target=_worker, args=(child,), daemon=True)
    worker.start()
    slow: list[str] = []
    current = ("", "")
    try:
        while True:
            if not parent.poll(HANG_S):
                pytest.fail(f"{current[0]} did not finish on {current[1]} within {HANG_S:.0f} s")
            message = parent.recv()
            if message[0] == "end":
                break
            if message[0] == "start":
                current = message[1:]
            elif message[3] > CPU_BOUND_S:
                slow.append(f"{message[1]} on {message[2]}: {message[3]:.2f} s")
    finally:
        worker.kill()
        worker.join()
    assert slow == []
