# Sourced by the install scripts: npm's name for this machine's platform (linux-x64, darwin-arm64,
# ...), the suffix of the packages that carry native binaries. Fails on a machine with none.
npm_platform() {
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) echo linux-x64 ;;
    Linux/aarch64 | Linux/arm64) echo linux-arm64 ;;
    Darwin/x86_64) echo darwin-x64 ;;
    Darwin/arm64) echo darwin-arm64 ;;
    *) return 1 ;;
  esac
}
