"""Each adapter's own labels (buttons, captions) in English and Vietnamese: the same keys and placeholders as the
Korean ones, and no Korean left in them."""

import importlib
import string

import pytest


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}



@pytest.mark.parametrize("module", ["adapters.slack.labels", "adapters.teams.labels"])
@pytest.mark.parametrize("language", ["en", "vi"])
def test_adapter_labels_in_another_language_keep_the_placeholders_and_hold_no_korean(module: str,
                                                                                     language: str) -> None:
    table = importlib.import_module(module)
    said = table.labels_for(language)
    for key, korean in table.KOREAN.items():
        assert _fields(getattr(said, key)) == _fields(korean), key
        assert not any("가" <= c <= "힣" for c in getattr(said, key)), key
