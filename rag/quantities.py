"""Moved to `rag.lang.quantities` (the language home); this name stays until its last importers move."""

from rag.lang.quantities import (  # noqa: F401
    ASKED_CONDITION,
    ASKS_AMOUNT,
    ASKS_FIGURE,
    FIGURE,
    STATED_CONDITION,
    asked_quantities,
    numeric_conditions,
    with_figure_units,
)
