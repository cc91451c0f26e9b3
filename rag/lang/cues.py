"""Cue tables: regular expressions kept as data (`rag/data/*.yaml`), each entry with the examples it must match and
the counter-examples it must not, which one parametrised test per table runs.

`load_table` reads a table into its pydantic model and compiles every `Cue` in it at load, so a bad entry or a bad
pattern stops the bot at start-up with an error that names the file, the line and the entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rag.lang.lexicon import where

TableT = TypeVar("TableT", bound=BaseModel)


class Cue(BaseModel):
    """One pattern (or several alternatives, any of which matches) with the texts it must match (examples) and
    must not (counter-examples)."""

    model_config = ConfigDict(frozen=True, ignored_types=(cached_property,))

    pattern: str = ""
    patterns: tuple[str, ...] = ()  # alternatives, one a line: easier to read and to extend than one long pattern
    weak: bool = False  # `question_core.yaml` asks: counts when no sentence asks with a plain cue
    examples: tuple[str, ...] = Field(min_length=1)
    counter_examples: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_pattern(self) -> Cue:
        if bool(self.pattern) == bool(self.patterns):
            raise ValueError("give either `pattern` or `patterns`")
        return self

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern or "|".join(f"(?:{p})" for p in self.patterns))

    def search(self, text: str) -> bool:
        return self.compiled.search(text) is not None


def load_table(path: Path, model: type[TableT]) -> TableT:
    """The table at `path` as `model`, every cue compiled; a bad entry or pattern is a ValueError naming the file,
    the line and the entry (`asks.yaml:12: figure: …`)."""
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    try:
        table = model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        raise ValueError(f"{where(path, *loc)}: {'.'.join(map(str, loc))}: {error['msg']}") from None
    for loc, cue in cues_of(table):
        try:
            cue.compiled  # noqa: B018 - compiled at load, so a bad pattern fails at start-up
        except re.error as exc:
            entry = ".".join(map(str, loc))
            raise ValueError(f"{where(path, *loc)}: {entry} ({cue.pattern or cue.patterns!r}): {exc}") from None
    return table


def cues_of(value: object, loc: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Cue]]:
    """(where, cue) for every cue in a table, in file order."""
    if isinstance(value, Cue):
        yield loc, value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from cues_of(getattr(value, name), (*loc, name))
    elif isinstance(value, tuple):
        for number, item in enumerate(value):
            yield from cues_of(item, (*loc, number))
