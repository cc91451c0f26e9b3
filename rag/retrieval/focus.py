"""Whether a follow-up asks about something other than the article the previous reply cited.

A folded follow-up searches its own words with the conversation's words beside them, and those words are the
previous article's: "그럼 전문대학은 어떤 과정까지 맡길 수 있어요?" after a reply quoting 제21조 found 제21조 again. The
follow-up's own words are ranked alone; when they score the cited article well under the best one, the follow-up
has moved on, and the cited article's prior is multiplied by `cited_focus_factor` (a demotion, fitted with
`benchmarks/focus_fit.py`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rag.models import Hit


class FollowupFocus:
    """Reads the ranking of a follow-up's own words: has it moved on from the articles the previous reply cited?"""

    def __init__(self, share: float) -> None:
        self.share = share

    def moved_on(self, own_ranking: Sequence[Hit], cited: Collection[tuple[str, str]]) -> bool:
        """True when the best-scored cited article (absent: 0) scores under `share` of the own words' best."""
        if not own_ranking or not cited:
            return False
        best = own_ranking[0].score
        mine = max((h.score for h in own_ranking if (h.chunk.doc, h.chunk.article) in cited), default=0.0)
        return best > 0 and mine < self.share * best
