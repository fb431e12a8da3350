"""``memdir.preview``: the editor turns the preview rules on as ``preview = true`` does; off by
default in the server and in VS Code's contributed setting."""

from __future__ import annotations

import json
from pathlib import Path

from memdir.lint.engine import LintContext
from memdir.lint.rules import PREVIEW_CODES
from memdir_lsp.settings import parse_editor_settings
from memhelpers import ROOT


def _enabled(data: object, root: Path) -> frozenset[str]:
    settings, errors = parse_editor_settings(data)
    assert errors == []
    return LintContext.from_settings(root, settings.for_directory(root)).enabled


def test_off_by_default_in_the_server(tmp_path: Path) -> None:
    assert not PREVIEW_CODES & _enabled({}, tmp_path)
    assert not PREVIEW_CODES & _enabled(None, tmp_path)


def test_on_with_the_editor_setting(tmp_path: Path) -> None:
    assert _enabled({"preview": True}, tmp_path) >= PREVIEW_CODES
    assert _enabled({"memdir": {"preview": True}}, tmp_path) >= PREVIEW_CODES


def test_the_editor_wins_over_memdir_toml(tmp_path: Path) -> None:
    (tmp_path / "memdir.toml").write_text("preview = true\n", encoding="utf-8")
    assert _enabled({}, tmp_path) >= PREVIEW_CODES
    assert not PREVIEW_CODES & _enabled({"preview": False}, tmp_path)


def test_a_bad_value_is_reported_and_preview_stays_off(tmp_path: Path) -> None:
    settings, errors = parse_editor_settings({"preview": "on"})
    assert len(errors) == 1 and "preview" in errors[0]
    assert settings.for_directory(tmp_path).preview is False


def test_vscode_contributes_it_off() -> None:
    package = json.loads((ROOT / "client-vscode" / "package.json").read_text(encoding="utf-8"))
    setting = package["contributes"]["configuration"]["properties"]["memdir.preview"]
    assert setting["type"] == "boolean" and setting["default"] is False
    source = (ROOT / "client-vscode" / "src" / "common" / "settings.ts").read_text("utf-8")
    assert "  'preview',\n" in source  # sent to the server when a user sets it
