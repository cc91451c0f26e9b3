"""rag.knowledge (ingest) uses retrieval's indexes; retrieval must not import knowledge back (no cycle)."""

import ast
from pathlib import Path

RETRIEVAL = Path(__file__).resolve().parents[4] / "rag" / "retrieval"


def test_retrieval_never_imports_the_knowledge_package():
    offenders = []
    for path in sorted(RETRIEVAL.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("rag.knowledge")]
    assert offenders == []
