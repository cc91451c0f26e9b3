"""The pipeline's stages. Other packages build them through `build_stages` (see `rag.stages.factory`).

The names load lazily: `rag.pipeline` imports stage modules, and the factory imports `rag.pipeline`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag.stages.factory import StageTimeouts, build_stages

__all__ = ["StageTimeouts", "build_stages"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from rag.stages import factory

        return getattr(factory, name)
    raise AttributeError(f"module 'rag.stages' has no attribute {name!r}")
