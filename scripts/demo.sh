#!/usr/bin/env bash
# Sets up, indexes the bundled sample regulations and asks one question (offline, no API key needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export REGBOT_DATA_DIR=${REGBOT_DATA_DIR:-.regbot}
.venv/bin/regbot ingest samples
# A fictional statute the company's rules cite, as a `law` collection: answers show it under "관련 법령".
.venv/bin/regbot ingest samples_law --collection law
.venv/bin/regbot ask "${1:-입사 1년 지나면 연차 며칠 받아?}"
