"""Moved to `rag.lang.quantities` (the language home); this name stays until its last importers move."""

from rag.lang.quantities import *  # noqa: F403
