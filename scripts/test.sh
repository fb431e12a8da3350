#!/usr/bin/env bash
# Set up .venv with the test and dev extras and run the whole test suite:
# static checks (ruff, mypy, the import contract, the generated protocol files, the docs build),
# pytest (unit, property-based, pytest-lsp end to end, real
# headless Neovim), the VS Code extension's unit tests, and the extension end to end in a real
# VS Code (scripts/e2e-vscode.sh: code-server in Debian's Chromium; the first run on a machine
# installs them, with apt, and takes minutes; later runs reuse the cache).
# MEMDIR_SKIP_VSCODE_E2E=1 skips only that last step, for machines without apt; it says so.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/lint-imports  # the layer contract in pyproject.toml ([tool.importlinter])
# The memory/* protocol: schema.json, the client's protocolTypes.ts and docs/protocol.md must be
# what the typed params and results generate.
.venv/bin/python -m memdir_lsp.memory_protocol.schema
site_dir=$(mktemp -d)  # the docs must build without a warning (mkdocs.yml)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site_dir"
rm -rf "$site_dir"

# Clients written by others, installed into a cache; without npm (exit 3) their tests skip.
optional_install() {  # SCRIPT WHAT
  local status=0
  bash "$1" >/dev/null || status=$?
  if [ "$status" -eq 3 ]; then
    echo "test.sh: npm missing: $2 will be skipped" >&2
  elif [ "$status" -ne 0 ]; then
    exit "$status"
  fi
}
optional_install scripts/install-claude-code.sh "the agent tests against Claude Code (tests/fidelity, tests/agents)"
optional_install scripts/install-mcp-inspector.sh "the MCP Inspector test (tests/agents)"

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

if [ "${MEMDIR_SKIP_VSCODE_E2E:-}" = 1 ]; then
  echo "test.sh: VS Code end-to-end test SKIPPED (MEMDIR_SKIP_VSCODE_E2E=1)" >&2
else
  bash scripts/e2e-vscode.sh
fi
