#!/usr/bin/env bash
# Set up .venv with the test and dev extras and run the whole test suite:
# static checks (ruff, mypy), pytest (unit, property-based, pytest-lsp end to end, real
# headless Neovim), and the VS Code extension's unit tests when Node is present.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy

status=0
.venv/bin/python -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
[ "$status" -eq 0 ] || exit "$status"

if [ -f client-vscode/package.json ]; then
  (cd client-vscode && npm ci --no-audit --no-fund && npm run lint && npm test)
fi
