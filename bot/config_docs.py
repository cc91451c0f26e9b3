"""Generates `docs/configuration.md` and `.env.example` from `Settings`, so neither can drift from the code.

    python -m bot.config_docs --write        # rewrite both files (after adding or changing a setting)
    python -m bot.config_docs                # print docs/configuration.md
    python -m bot.config_docs --env-example  # print .env.example

A setting documents itself through its `Field`: `alias` (the environment variable), `description` (its effect),
and in `json_schema_extra` `doc_default` (a default computed at run time, in words) and `secret` (no value in the
example file). tests/unit/bot/test_config_docs.py fails when a file differs from what this module prints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from bot.config import Settings

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIGURATION_MD = REPO_ROOT / "docs" / "configuration.md"
ENV_EXAMPLE = REPO_ROOT / ".env.example"
REGENERATE = "python -m bot.config_docs --write"

def _scopes_format() -> str:
    """The scopes-file section, from bot/service/scopes.py's docstring (the one place the format is written down)."""
    from bot.service import scopes

    first, _, rest = (scopes.__doc__ or "").strip().partition("\n")
    named = "Collections are named at ingest: `regbot ingest FOLDER --collection hr` (default: `default`)."
    return f"## The scopes file (`REGBOT_SCOPES_FILE`)\n\n{first} {named}\n{rest}\n"


def _default(field: FieldInfo) -> str:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    if "doc_default" in extra:
        return str(extra["doc_default"])
    value = field.default
    if value is PydanticUndefined or value is None or value == "":
        return "(unset)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def _example_value(field: FieldInfo) -> str:
    """The default as it would be written in an env file ('' when it has none or is computed)."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    value = field.default
    if extra.get("secret") or "doc_default" in extra or value is PydanticUndefined or value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _cell(description: str | None) -> str:
    return (description or "(not described yet)").replace("|", "\\|")


def documented_settings() -> list[tuple[str, FieldInfo]]:
    """(environment variable, field) for every setting; a nested settings group (`REGBOT_RETRIEVAL_*`) is listed
    field by field under its own prefix."""
    rows: list[tuple[str, FieldInfo]] = []
    for name, field in Settings.model_fields.items():
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseSettings):
            prefix = group.model_config.get("env_prefix", "")
            rows.extend((f"{prefix}{sub.upper()}", info) for sub, info in group.model_fields.items())
        else:
            rows.append((field.alias or name.upper(), field))
    return rows


def configuration_markdown() -> str:
    rows = "\n".join(f"| `{env}` | {_default(field)} | {_cell(field.description)} |"
                     for env, field in documented_settings())
    return f"""# Configuration

<!-- Generated from bot/config.py by `{REGENERATE}`; do not edit by hand. -->

regbot reads these environment variables once, at start-up (`bot/config.py`, `Settings`). A `.env` file is read
by `docker compose` (copy `.env.example`); the CLI reads the process environment.

**The data dir**, first found wins: `regbot --data-dir DIR` (one command), then `REGBOT_DATA_DIR`, then the nearest
`.regbot` folder in the current directory or a parent (`scripts/demo.sh` writes `./.regbot`, so every command run
inside the clone finds the demo's index), then the per-user data directory. A read command that finds no index
names every place it looked.

| variable | default | effect |
|---|---|---|
{rows}

{_scopes_format()}"""


def env_example() -> str:
    blocks = []
    for env, field in documented_settings():
        description = field.description or "(not described yet)"
        default = _default(field).replace("`", "")
        blocks.append(f"# {description} Default: {default}.\n# {env}={_example_value(field)}")
    body = "\n\n".join(blocks)
    return (f"# regbot settings (generated from bot/config.py by `{REGENERATE}`; see docs/configuration.md).\n"
            "# Copy to .env and uncomment what you set; every line left commented keeps its default.\n\n"
            f"{body}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.config_docs", description=__doc__.splitlines()[0])
    parser.add_argument("--env-example", action="store_true", help="print .env.example instead of the Markdown")
    parser.add_argument("--write", action="store_true", help="write docs/configuration.md and .env.example")
    args = parser.parse_args(argv)
    if args.write:
        CONFIGURATION_MD.write_text(configuration_markdown(), encoding="utf-8")
        ENV_EXAMPLE.write_text(env_example(), encoding="utf-8")
        print(f"wrote {CONFIGURATION_MD.relative_to(REPO_ROOT)} and {ENV_EXAMPLE.relative_to(REPO_ROOT)}")
        return 0
    sys.stdout.write(env_example() if args.env_example else configuration_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
