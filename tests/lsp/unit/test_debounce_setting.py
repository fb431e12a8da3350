"""``memdir.diagnostics.debounce``: the wait from a keystroke to a pushed re-check is a setting
(default at most 150 ms, 0 allowed), and VS Code offers it with the server's default."""

from __future__ import annotations

import json

import pytest
from memdir_lsp.settings import DEFAULT_DEBOUNCE_MS, parse_editor_settings
from memhelpers import ROOT


def test_the_default_is_short() -> None:
    settings, errors = parse_editor_settings({})
    assert settings.debounce_ms == DEFAULT_DEBOUNCE_MS <= 150 and errors == []


@pytest.mark.parametrize("value", [0, 40, 150.0, 2000])
def test_whole_milliseconds_from_zero(value: float) -> None:
    settings, errors = parse_editor_settings({"diagnostics": {"debounce": value}})
    assert (settings.debounce_ms, errors) == (int(value), [])
    # initializationOptions may wrap the section.
    wrapped, _ = parse_editor_settings({"memdir": {"diagnostics": {"debounce": value}}})
    assert wrapped.debounce_ms == int(value)
    # VS Code's client sends the keys a user set by their dotted names.
    dotted, errors = parse_editor_settings({"diagnostics.debounce": value})
    assert (dotted.debounce_ms, errors) == (int(value), [])


@pytest.mark.parametrize("value", [-1, 1.5, "fast", True, 10**9, [100]])
def test_a_bad_value_keeps_the_default_and_says_so(value: object) -> None:
    settings, errors = parse_editor_settings(
        {"diagnostics": {"debounce": value}, "directories": []}
    )
    assert settings.debounce_ms == DEFAULT_DEBOUNCE_MS
    assert len(errors) == 1 and "diagnostics.debounce" in errors[0]


def test_not_a_memdir_toml_key() -> None:
    # The server's own key: never handed to the lint settings (which would reject it).
    settings, errors = parse_editor_settings({"diagnostics": {"debounce": 0}})
    assert "diagnostics" not in settings.overrides and errors == []


def test_vscode_offers_it_with_the_servers_default() -> None:
    package = json.loads((ROOT / "client-vscode" / "package.json").read_text(encoding="utf-8"))
    setting = package["contributes"]["configuration"]["properties"]["memdir.diagnostics.debounce"]
    assert setting["default"] == DEFAULT_DEBOUNCE_MS
    assert setting["minimum"] == 0 and setting["type"] == "integer"
