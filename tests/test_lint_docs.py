"""The codes table in docs/diagnostics.md is the registry's, and the pre-commit hooks are sane."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from memdir.lint.codes import ALL_CODES, RULES, markdown_table

ROOT = Path(__file__).resolve().parent.parent


def test_docs_table_is_generated_from_the_registry() -> None:
    for name in ("docs/diagnostics.md", "README.md"):
        doc = (ROOT / name).read_text(encoding="utf-8")
        assert markdown_table() in doc, f"regenerate the table in {name}: see docs/diagnostics.md"


def test_codes_are_stable_and_ordered() -> None:
    assert ALL_CODES[:7] == tuple(f"MEM00{i}" for i in range(1, 8))
    assert ALL_CODES[7:] == tuple(f"MEM1{i:02d}" for i in range(1, 15))
    for rule in RULES.values():
        assert re.fullmatch(r"[a-z0-9-]+", rule.name)
        assert rule.summary.endswith(".") and rule.why.endswith(".")


def test_pre_commit_hooks() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    by_id = {hook["id"]: hook for hook in hooks}
    assert by_id["memdir-lint"]["entry"] == "memdir lint"
    assert by_id["memdir-lint-fix"]["entry"] == "memdir lint --fix"
    for hook in hooks:
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False  # the directory is linted, not the file list
        assert re.search(hook["files"], "memory/MEMORY.md")
        assert re.search(hook["files"], "memory/memdir.toml")
