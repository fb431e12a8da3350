"""docs/security.md names a test behind each guarantee: every test it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from memhelpers import ROOT

PAGE = ROOT / "docs" / "security.md"
#: `tests/x/test_y.py`, `tests/x/test_y.py::name` and, in the same cell, `::other`.
_CELL_REF = re.compile(r"`(tests/[\w/]+\.py|tests/[\w/]+/)(?:::(\w+))?`|`::(\w+)`")


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def test_every_test_the_security_page_names_exists() -> None:
    missing: list[str] = []
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    named = 0
    for row in rows:
        current: Path | None = None
        for path, name, continued in _CELL_REF.findall(row):
            if path:
                current = ROOT / path
                if not current.exists():
                    missing.append(path)
                    continue
            name = name or continued
            if not name:
                continue
            named += 1
            if current is None or current.is_dir() or name not in _functions(current):
                missing.append(f"{current}::{name}")
    assert missing == []
    assert named >= 20  # the page is a table of guarantees, each with its test


def test_every_security_test_file_is_on_the_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    files = sorted(p.name for p in (ROOT / "tests" / "security").glob("test_sec_*.py"))
    unnamed = [name for name in files if name not in text and name != "test_sec_docs.py"]
    assert unnamed == []
