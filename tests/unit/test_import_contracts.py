"""The import contracts of the house: bot → adapters → rag, adapters that never know each other, no cycles.

Read from the source with `ast` (no import runs), counting imports inside functions too, so a cycle hidden by a
lazy import is still a cycle, and imports under `if TYPE_CHECKING:` too: an annotation that names a module's type
is a dependency on it, and a cycle through one still ties the two modules together. `from package import submodule`
is an edge to the submodule.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rag", "bot", "adapters")
PLATFORMS = ("adapters.slack", "adapters.teams", "adapters.web")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(name: str, path: Path, modules: set[str]) -> set[str]:
    """The project modules `name` imports anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    wanted: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            submodules = {f"{source}.{alias.name}" for alias in node.names} & modules
            wanted.update(submodules or {source})
    found = set()
    for module in wanted:
        while module and module not in modules:
            module = module.rpartition(".")[0]
        if module and module != name:
            found.add(module)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    modules = set(paths)
    return {name: imported(name, path, modules) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def violations(graph: dict[str, set[str]], source: str, forbidden: str) -> list[str]:
    return sorted(f"{m} → {t}" for m, targets in graph.items() if under(m, source)
                  for t in targets if under(t, forbidden))


@pytest.mark.parametrize(("source", "forbidden"), [("rag", "bot"), ("rag", "adapters"), ("adapters", "bot")])
def test_layers_point_one_way_bot_then_adapters_then_rag(graph, source, forbidden):
    assert violations(graph, source, forbidden) == []


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_platform_adapter_never_imports_another(graph, platform):
    others = [p for p in PLATFORMS if p != platform]
    assert [v for other in others for v in violations(graph, platform, other)] == []


def test_no_module_imports_itself_round_a_cycle(graph):
    assert cycles(graph) == []


def test_the_checks_can_fail():
    # A made-up graph with a cycle and a wrong-way import: the same functions must report both.
    made_up = {"rag.a": {"rag.b"}, "rag.b": {"rag.a", "bot.x"}, "bot.x": set()}
    assert cycles(made_up) == [["rag.a", "rag.b"]]
    assert violations(made_up, "rag", "bot") == ["rag.b → bot.x"]


def test_an_import_for_annotations_only_is_an_edge_too(tmp_path):
    module = tmp_path / "a.py"
    module.write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from rag.b import B\n")
    assert imported("rag.a", module, {"rag.a", "rag.b"}) == {"rag.b"}


def test_the_architecture_walk_names_only_files_that_exist():
    walk = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:rag|bot|adapters|docs|tests)/[\w/.]+?)`", walk))
    assert len(named) > 30
    missing = sorted(p for p in named if not (ROOT / p.rstrip("/")).exists())
    assert missing == []
