"""The ``target`` setting: which agent behaviour memdir reproduces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memdir.config import Settings, load_settings, settings_from_mapping
from memdir.faces.cli import main
from memdir.target import DEFAULT_TARGET, SEED, TARGETS, get_target
from memhelpers import ROOT

_OVER_CAP = "\n".join(f"- [M{i}](m{i}.md) — hook" for i in range(205))


def test_settings_take_a_known_target_and_report_an_unknown_one() -> None:
    assert Settings().agent_target == DEFAULT_TARGET
    assert settings_from_mapping({"target": "seed"}).agent_target == SEED
    bad = settings_from_mapping({"target": "claude-code-9"})
    assert bad.agent_target == DEFAULT_TARGET
    assert bad.errors == ("`target` must be one of claude-code-2.1.328, seed, got 'claude-code-9'",)
    with pytest.raises(ValueError, match=r"known targets: claude-code-2\.1\.328, seed"):
        get_target("nope")


def test_the_vscode_setting_offers_exactly_the_known_targets() -> None:
    manifest = json.loads((ROOT / "client-vscode" / "package.json").read_text(encoding="utf-8"))
    setting = manifest["contributes"]["configuration"]["properties"]["memdir.target"]
    assert sorted(setting["enum"]) == sorted(TARGETS)
    assert setting["default"] == DEFAULT_TARGET.name


def test_memdir_index_follows_the_target_flag_and_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "MEMORY.md").write_text(_OVER_CAP, encoding="utf-8")
    assert main(["index", "--dir", str(tmp_path)]) == 0
    assert "loaded: 5 of 205 lines were cut off, starting at line 201" in capsys.readouterr().out
    assert main(["index", "--dir", str(tmp_path), "--target", "seed"]) == 0
    assert "Only part of it was loaded. Keep" in capsys.readouterr().out
    (tmp_path / "memdir.toml").write_text('target = "seed"\n', encoding="utf-8")
    assert load_settings(tmp_path).target == "seed"
    assert main(["index", "--dir", str(tmp_path)]) == 0
    assert "Only part of it was loaded. Keep" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["index", "--dir", str(tmp_path), "--target", "claude-code-1"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'claude-code-1'" in capsys.readouterr().err
