"""The preview set, as ruff's: rules not yet right often enough on real memory dirs are off
unless preview is on (``preview = true``, ``memdir lint --preview``, the editor's setting, the
MCP ``memory_lint`` through the dir's own settings); selecting one by its code without preview
does not run it, and says so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.config import Settings, load_settings, settings_from_mapping
from memdir.faces.cli import main
from memdir.faces.mcp_server import MemdirMCP
from memdir.lint.engine import LintContext, with_cli_codes
from memdir.lint.rules import (
    PREVIEW_CODES,
    RULES,
    preview_selections_ignored,
    rule_enabled,
)

MakeDir = Callable[[dict[str, str | bytes]], Path]

#: A project memory whose deadline passed long ago: MEM121, a preview rule, finds it.
FILES: dict[str, str | bytes] = {
    "MEMORY.md": "- [Billing cutover](billing.md) — when the old billing API goes away\n",
    "billing.md": "---\nname: billing-cutover\ndescription: when the old billing API goes "
    "away for good\ntype: project\n---\nThe old billing API shuts down on 2020-01-31.\n",
}


def codes_of(out: str) -> set[str]:
    return {word for word in out.split() if word.startswith("MEM") and word[3:].isdigit()}


def test_the_preview_set_holds_the_rules_below_the_bar() -> None:
    assert {"MEM004", "MEM117", "MEM118", "MEM121"} <= PREVIEW_CODES
    assert all(RULES[code].precision for code in PREVIEW_CODES)


def test_off_by_default_on_with_preview() -> None:
    off = LintContext.from_settings(Path("/m"), Settings())
    on = LintContext.from_settings(Path("/m"), Settings(preview=True))
    assert not PREVIEW_CODES & off.enabled
    assert on.enabled == frozenset(RULES)
    assert off.enabled == frozenset(RULES) - PREVIEW_CODES


def test_selecting_a_preview_code_without_preview_runs_nothing_and_is_named() -> None:
    exact = Settings(select=("MEM121", "MEM107"))
    assert not rule_enabled(exact, "MEM121") and rule_enabled(exact, "MEM107")
    assert preview_selections_ignored(exact) == ["MEM121"]
    # A prefix takes the preview rules it covers only with preview, silently (as ruff).
    prefix = Settings(select=("MEM12",))
    assert not rule_enabled(prefix, "MEM121") and rule_enabled(prefix, "MEM120")
    assert preview_selections_ignored(prefix) == []
    with_preview = Settings(select=("MEM121",), preview=True)
    assert rule_enabled(with_preview, "MEM121") and preview_selections_ignored(with_preview) == []
    # Ignoring or turning it off still wins over preview.
    assert not rule_enabled(Settings(preview=True, ignore=("MEM121",)), "MEM121")
    assert not rule_enabled(Settings(preview=True, severity={"MEM121": "off"}), "MEM121")


def test_the_setting_is_a_boolean_from_every_source(tmp_path: Path) -> None:
    assert Settings().preview is False
    assert settings_from_mapping({"preview": True}).preview is True
    bad = settings_from_mapping({"preview": "yes"})
    assert bad.preview is False and "`preview` must be true or false" in bad.errors[0]
    (tmp_path / "pyproject.toml").write_text("[tool.memdir]\npreview = true\n", encoding="utf-8")
    memory = tmp_path / "memory"
    memory.mkdir()
    assert load_settings(memory).preview is True
    # --preview turns it on, never off.
    assert with_cli_codes(Settings(), None, None, preview=True).preview is True
    assert with_cli_codes(Settings(preview=True), None, None).preview is True


def test_cli_off_by_default(make_dir: MakeDir, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_dir(FILES)
    assert main(["lint", str(root)]) == 0
    out, _ = capsys.readouterr()
    assert "MEM121" not in codes_of(out)


def test_cli_on_with_the_flag(make_dir: MakeDir, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_dir(FILES)
    main(["lint", str(root), "--preview"])
    out, _ = capsys.readouterr()
    assert "MEM121" in codes_of(out)


def test_cli_on_with_memdir_toml(make_dir: MakeDir, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_dir({**FILES, "memdir.toml": "preview = true\n"})
    main(["lint", str(root)])
    out, _ = capsys.readouterr()
    assert "MEM121" in codes_of(out)


def test_cli_content_in_the_index_only_with_preview(
    make_dir: MakeDir, capsys: pytest.CaptureFixture[str]
) -> None:
    # Content in the index (MEM004) is below the bar on real dirs: a preview rule.
    index = FILES["MEMORY.md"] + "\nThe old billing API answers in XML; the new one in JSON.\n"
    root = make_dir({**FILES, "MEMORY.md": index})
    assert main(["lint", str(root)]) == 0
    assert "MEM004" not in codes_of(capsys.readouterr().out)
    assert main(["lint", str(root), "--preview"]) == 1
    assert "MEM004" in codes_of(capsys.readouterr().out)


def test_cli_selecting_a_preview_code_warns(
    make_dir: MakeDir, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dir(FILES)
    assert main(["lint", str(root), "--select", "MEM121"]) == 0
    out, err = capsys.readouterr()
    assert "MEM121" not in codes_of(out)
    assert "selecting MEM121 has no effect: it is a preview rule" in err
    assert "--preview" in err
    main(["lint", str(root), "--select", "MEM121", "--preview"])
    out, err = capsys.readouterr()
    assert codes_of(out) == {"MEM121"} and "no effect" not in err


def test_cli_rule_list_marks_preview_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "preview" in lines["MEM121"] and "preview" not in lines["MEM107"]


def test_mcp_memory_lint_follows_the_dirs_settings(make_dir: MakeDir, tmp_path: Path) -> None:
    root = make_dir(FILES)
    codes = {d["code"] for d in MemdirMCP([root]).lint().structured_content["diagnostics"]}
    assert "MEM121" not in codes
    (root / "memdir.toml").write_text("preview = true\n", encoding="utf-8")
    codes = {d["code"] for d in MemdirMCP([root]).lint().structured_content["diagnostics"]}
    assert "MEM121" in codes
