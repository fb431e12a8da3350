#!/usr/bin/env bash
# Compare memdir with a Claude Code release, as the agent fidelity tests do (tests/fidelity):
# install the release (scripts/install-claude-code.sh), run it offline on every fixture, and print
# each difference (memory dir location, path A's injected MEMORY.md text, path B's selector request
# and surfaced memories) as a unified diff.
#
# Usage: scripts/agent-diff.sh [--show] [VERSION] [FIXTURE...]
#   VERSION defaults to the pinned release; --show also prints per fixture the agent's memory dir
#   and how much it injected and surfaced.
# Exit 0 when memdir and the agent agree on every fixture, 1 when they differ, 2 or 3 when the
# release cannot be installed (3: npm is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

show=()
if [ "${1:-}" = --show ]; then
  show=(--show)
  shift
fi
version=${1:-}
bash scripts/install-claude-code.sh ${version:+"$version"} >/dev/null
PYTHONPATH=tests exec .venv/bin/python tests/fidelity/agent_diff.py "${show[@]}" "$@"
