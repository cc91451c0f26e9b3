"""Moved to `rag.lang.sanctions` (the language home); this name stays until its last importers move."""

from rag.lang.sanctions import ASKS_SANCTION, SANCTION_TITLE, STATES_SANCTION  # noqa: F401
