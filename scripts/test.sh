#!/usr/bin/env bash
# Sets up and runs the whole test suite with lint. Installs redis-server when the machine lacks it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
bash scripts/system-deps.sh
.venv/bin/ruff check .
.venv/bin/python -m pytest "$@"
