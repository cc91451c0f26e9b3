#!/usr/bin/env bash
# Creates .venv (Python >= 3.11) and installs regbot: the product only, or with `--test` also its test tools
# (pytest, playwright, kubernetes-validate…: the `test` extra). Idempotent; quiet when nothing changed.
# Each install has its own stamp, so the demo after the tests (or the tests after the demo) reinstalls nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

extra=""
stamp=.venv/.regbot-installed
if [ "${1:-}" = "--test" ]; then
  extra="[test]"
  stamp=.venv/.regbot-test-installed
fi

PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      PYTHON=$candidate
      break
    fi
  done
fi
if [ -z "$PYTHON" ]; then
  echo "regbot needs Python 3.11 or newer (none found on PATH)" >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $PYTHON"
  "$PYTHON" -m venv .venv
fi
# The test install holds the product install too; a newer pyproject.toml invalidates both.
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  if [ -n "$extra" ]; then
    echo "==> installing regbot with its test tools (first run takes a few minutes)"
  else
    echo "==> installing regbot and its dependencies (first run takes a few minutes)"
  fi
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".$extra"
  touch "$stamp"
fi
