#!/usr/bin/env bash
# Build the VS Code extension into a .vsix that carries its language server:
#
#   scripts/package-vscode.sh [OUT.vsix]      (default: dist/memdir-<version>.vsix)
#
# Needs Node (npm) and a Python 3.11+ with pip: the repository's .venv, or MEMDIR_BUNDLE_PYTHON.
# @vscode/vsce needs Node >= 22, so Node 24 and vsce are installed into the cache
# ($MEMDIR_E2E_CACHE or ~/.cache/memdir-e2e) on the first run. vsce runs the extension's
# vscode:prepublish script: scripts/bundle-vscode-server.sh (memdir and its pure-Python
# dependencies into client-vscode/bundled/libs) and the production esbuild bundle, which holds
# every npm dependency, so vsce does not look at node_modules.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
VSCE_VERSION=4.1.0
CACHE=${MEMDIR_E2E_CACHE:-$HOME/.cache/memdir-e2e}
log() { printf '[package-vscode] %s\n' "$*" >&2; }
# shellcheck source=lib/npm-cache.sh
. "$REPO/scripts/lib/npm-cache.sh"

command -v npm >/dev/null || { log "npm not found: install Node.js 20 or newer"; exit 3; }
mkdir -p "$CACHE"
ensure_node24 "$CACHE" log

VSCE_DIR=$CACHE/vsce
npm_cache_install "$VSCE_DIR" "$VSCE_VERSION" node_modules/.bin/vsce log "@vscode/vsce@$VSCE_VERSION"

version=$(node -p "require('$REPO/client-vscode/package.json').version")
OUT=${1:-$REPO/dist/memdir-$version.vsix}
mkdir -p "$(dirname "$OUT")"
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")

cd "$REPO/client-vscode"
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error >&2
vsce_log=$(mktemp)
"$VSCE_DIR/node_modules/.bin/vsce" package --no-dependencies --allow-missing-repository \
  -o "$OUT" >"$vsce_log" 2>&1 || { cat "$vsce_log" >&2; rm -f "$vsce_log"; exit 1; }
rm -f "$vsce_log"
log "wrote $OUT ($(du -h "$OUT" | cut -f1))"
echo "$OUT"
