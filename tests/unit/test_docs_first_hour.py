"""The docs a new operator reads say what the code does: the data dir's order, and what deployment can turn on."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_and_configuration_give_the_data_dir_order_the_code_uses():
    order = ["--data-dir", "REGBOT_DATA_DIR", ".regbot", "per-user"]
    for doc in ("README.md", "docs/configuration.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        paragraph = next(p for p in re.split(r"\n\s*\n", text) if "First found wins" in p or "first found wins" in p)
        positions = [paragraph.index(word) for word in order]
        assert positions == sorted(positions), f"{doc}: {paragraph}"


def test_deployment_names_the_playground_admin_and_where_turn_records_live():
    text = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    for words in ("REGBOT_PLAYGROUND=true", "REGBOT_PUBLIC_HOSTS", "GET /admin", "REGBOT_ADMIN_TOKEN",
                  "records.sqlite", "REGBOT_RECORDS_DAYS"):
        assert words in text
