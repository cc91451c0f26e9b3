"""Quality tests run on the ko-law corpus with the real embedder: one ingested data dir for the session.

A simple version: ingests ../shared/corpus/ko-law into a temporary data dir (about twenty minutes on two cores),
or copies an existing ingest named by TEST_KOLAW_DATA_DIR (the variable must not start with REGBOT_: the root
conftest drops those).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from testkit import SHARED, SHARED_MISSING, make_settings

KOLAW = SHARED / "corpus" / "ko-law"


@pytest.fixture(scope="session")
def kolaw_data_dir(tmp_path_factory, kiwi_tokenizer) -> Path:
    """A data dir holding ../shared/corpus/ko-law ingested with the real embedder."""
    if not KOLAW.is_dir():
        pytest.skip(SHARED_MISSING)
    target = tmp_path_factory.mktemp("kolaw") / "data"
    existing = os.environ.get("TEST_KOLAW_DATA_DIR")
    if existing and (Path(existing) / "index.sqlite").exists():
        shutil.copytree(existing, target)
        return target
    from bot.app import build_components

    components = build_components(make_settings(target), tokenizer=kiwi_tokenizer)
    report = components.ingestor().ingest([KOLAW])
    assert not report.failed, report.failed
    return target
