"""Entry point for ``memdir-lsp`` (filled in by the language-server work)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("memdir-lsp: the language server is not implemented yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
