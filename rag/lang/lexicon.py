"""An operator's vocabulary: the language home's data files extended per deployment, never edited in place.

Each data file of the package (`rag/data/<name>.yaml`: synonyms, aliases, intents, glossary, changes, question_core
…) may be extended by files in the same format in the deployment's lexicon folder (`REGBOT_DATA_DIR/lexicon/`),
named `<name>*.yaml` (`synonyms.yaml`, `synonyms-hr.yaml`, `aliases_부서.yaml` …) and read after the package's
file, in name order. An organisation adds its own abbreviations, department names and 사내 용어 there.

A file that cannot be read is a `LexiconError` naming the file, raised at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from re import error as PatternError
from typing import TypeVar

import yaml

from rag.errors import ConfigError

PACKAGE_DATA = Path(__file__).resolve().parent.parent / "data"
T = TypeVar("T")


class LexiconError(ConfigError):
    """A data file of the vocabulary cannot be read; the message names the file and says what is wrong."""


class Lexicon:
    """Where a data file's package copy and a deployment's extensions are; `folder` None: the package's only."""

    def __init__(self, folder: Path | None = None, *, package: Path = PACKAGE_DATA) -> None:
        self.folder = folder
        self.package = package

    def extras(self, name: str) -> tuple[Path, ...]:
        """The deployment's `<name>*.yaml` files, in name order (none when the folder does not exist)."""
        if self.folder is None or not self.folder.is_dir():
            return ()
        return tuple(sorted(p for p in self.folder.glob(f"{name}*.yaml") if p.is_file()))

    def files(self, name: str) -> tuple[Path, ...]:
        """The package's `<name>.yaml`, then the deployment's extensions."""
        return (self.package / f"{name}.yaml", *self.extras(name))

    def read(self, name: str, parse: Callable[[Path], T]) -> list[T]:
        """Each file of `name` read by `parse` (a loader of one file), in order; a file `parse` cannot read is a
        `LexiconError` naming it."""
        return [_parsed(path, parse) for path in self.files(name)]

    def load_mapping(self, name: str, parse: Callable[[Path], Mapping[str, T]]) -> dict[str, T]:
        """One mapping from every file of `name`; a later file's entry replaces an earlier one's."""
        merged: dict[str, T] = {}
        for part in self.read(name, parse):
            merged.update(part)
        return merged

    def load_list_mapping(self, name: str, parse: Callable[[Path], Mapping[str, Sequence[T]]]) -> dict[str, list[T]]:
        """One `key → values` mapping from every file of `name`; a key in several files gets all their values."""
        merged: dict[str, list[T]] = {}
        for part in self.read(name, parse):
            for key, values in part.items():
                merged.setdefault(key, [])
                merged[key] += [v for v in values if v not in merged[key]]
        return merged

    def load_list(self, name: str, parse: Callable[[Path], Iterable[T]]) -> list[T]:
        """The entries of every file of `name`, the package's first."""
        return [entry for part in self.read(name, parse) for entry in part]


def _parsed(path: Path, parse: Callable[[Path], T]) -> T:
    try:
        return parse(path)
    except LexiconError:
        raise
    except (OSError, yaml.YAMLError, PatternError, ValueError, TypeError, KeyError, AttributeError) as exc:
        message = str(exc) or exc.__class__.__name__
        # A loader's own message often starts with the file name (and line) already: say it once, with the folder.
        raise LexiconError(f"{path.parent}/{message}" if message.startswith(path.name) else f"{path}: {message}") \
            from None


def where(path: Path, *keys: str | int) -> str:
    """"file:line" of the entry at `keys` (mapping keys and list indices) in a YAML file, for an error message: the
    line of the deepest key the file holds (its first line when it holds none, or cannot be read)."""
    try:
        node: yaml.Node | None = yaml.compose(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return f"{path.name}:1"
    line = node.start_mark.line + 1 if node is not None else 1
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            node = next((value for name, value in node.value if name.value == str(key)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
            node = node.value[key]
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return f"{path.name}:{line}"


def words_of(entries: Iterable[str]) -> Iterator[str]:
    """The words of vocabulary entries ("주말 출근" → 주말, 출근), spaces split."""
    for entry in entries:
        yield from str(entry).split()
