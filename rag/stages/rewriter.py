"""Rewriter: after a failed grade, one new query built from what was missing."""

from __future__ import annotations

from rag.retrieval.query import QueryAnalyzer


class OfflineQueryRewriter:
    """Rewrites into regulation vocabulary: the missing words plus their synonym-table terms."""

    def __init__(self, analyzer: QueryAnalyzer) -> None:
        self.analyzer = analyzer

    async def run(self, question: str, missing: tuple[str, ...]) -> str:
        analyzed = self.analyzer.analyze(question)
        words = list(dict.fromkeys([*missing, *analyzed.expansion, *analyzed.tokens]))
        return " ".join(w for w in words if len(w) > 1) or question
