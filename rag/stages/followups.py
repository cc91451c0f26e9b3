"""Follow-up questions: 2–3 short next questions grounded in the retrieved articles."""

from __future__ import annotations

from rag.models import Hit

MAX_FOLLOWUPS = 3
MAX_CHARS = 60


class OfflineFollowupSuggester:
    """Asks about the related articles that were retrieved but not cited, by their titles."""

    async def run(self, question: str, hits: list[Hit], cited_chunk_ids: set[str]) -> tuple[str, ...]:
        out: list[str] = []
        seen_titles: set[str] = set()
        for hit in hits:
            chunk = hit.chunk
            if chunk.chunk_id in cited_chunk_ids or not chunk.title or chunk.kind != "article":
                continue
            if chunk.title in seen_titles or chunk.title in question:
                continue
            seen_titles.add(chunk.title)
            out.append(f"{chunk.doc} {chunk.article}({chunk.title})에 대해 알려줘"[:MAX_CHARS])
            if len(out) == MAX_FOLLOWUPS:
                break
        return tuple(out)
