"""The rule pages in docs/rules are the registry's, and the pre-commit hooks are sane."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from memdir.lint.docs import pages, rule_page, rules_table, write
from memdir.lint.rules import ALL_CODES, RULES
from memhelpers import ROOT

RULES_DIR = ROOT / "docs" / "rules"


def test_committed_rule_pages_are_the_generated_ones() -> None:
    committed = {path.name: path.read_text(encoding="utf-8") for path in RULES_DIR.glob("*.md")}
    assert committed == pages(), "regenerate: python -m memdir.lint.docs docs/rules"


def test_every_rule_has_a_page_and_a_row() -> None:
    table = rules_table()
    for code, rule in RULES.items():
        page = rule_page(rule)
        assert page.startswith(f"# {code} `{rule.name}`\n")
        for text in (rule.summary, rule.why, rule.example, rule.remedy):
            assert text in page
        assert f"[**{code}**]({code}.md)" in table
    assert table.count("\n") == len(RULES) + 2


def test_preview_rules_say_so_with_their_measured_precision() -> None:
    table = rules_table().splitlines()
    preview = [rule for rule in RULES.values() if rule.preview]
    assert {"MEM117", "MEM118", "MEM121"} <= {rule.code for rule in preview}
    for rule in RULES.values():
        page = rule_page(rule)
        [row] = [line for line in table if f"[**{rule.code}**]" in line]
        assert ("**Preview**: off by default" in page) == rule.preview, rule.code
        assert ("*Preview*" in row) == rule.preview, rule.code
        if rule.preview:
            assert f"**Measured precision**: {rule.precision}" in page
            assert "real memory dirs" in rule.precision


def test_write_replaces_pages_of_removed_codes(tmp_path: Path) -> None:
    (tmp_path / "MEM999.md").write_text("# gone\n", encoding="utf-8")
    (tmp_path / "MEM001.md").write_text(pages()["MEM001.md"], encoding="utf-8")
    written = write(tmp_path)
    assert not (tmp_path / "MEM999.md").exists()
    assert tmp_path / "MEM001.md" not in written  # unchanged pages are left alone
    assert {path.name: path.read_text(encoding="utf-8") for path in tmp_path.iterdir()} == pages()


def test_mkdocs_nav_names_pages_that_exist() -> None:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in re.findall(r":\s+([\w/.-]+\.md)\s*$", text, flags=re.MULTILINE):
        if page not in ("protocol.md", "performance-lint.md"):  # written by their generators
            assert (ROOT / "docs" / page).is_file(), page


def test_codes_are_stable_and_ordered() -> None:
    assert ALL_CODES[:7] == tuple(f"MEM00{i}" for i in range(1, 8))
    assert ALL_CODES[7:23] == tuple(f"MEM1{i:02d}" for i in range(1, 17))
    # Later codes are added at the end of their family (MEM117 on, by area, possibly in parallel).
    assert all(re.fullmatch(r"MEM1\d\d", code) for code in ALL_CODES[23:])
    assert list(ALL_CODES) == sorted(ALL_CODES)
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


_RANGE = re.compile(r"MEM\d{3}\s*(?:–|—|-|to|through)\s*MEM\d{3}")


def test_no_hand_written_page_types_a_range_of_codes() -> None:
    """Ranges go stale as rules are added (README said MEM001–MEM116 when rules went to
    MEM122): hand-written pages link the generated table instead. The changelog is history."""
    pages_ = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "ARCHITECTURE.md"]
    pages_ += [p for p in (ROOT / "docs").rglob("*.md") if RULES_DIR not in p.parents]
    typed = {
        str(p.relative_to(ROOT)): _RANGE.findall(p.read_text(encoding="utf-8")) for p in pages_
    }
    assert {page: found for page, found in typed.items() if found} == {}
