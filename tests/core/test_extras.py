"""memdir.extras: a missing extra is one message naming it, and the selector degrades on it.

``sys.modules[name] = None`` is how Python spells "not installed" for one process; the real
thing (fresh venvs without the SDKs) is tests/install.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from memdir import extras
from memdir.extract.loop import run_extraction
from memdir.extras import MissingExtraError, install_command, require
from memdir.recall.choice import choose_selector
from memdir.recall.select import AnthropicSelector, LexicalSelector
from memhelpers import memory_header as header


@pytest.fixture
def no_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    # Submodules too: an import finds an already imported `anthropic.lib.tools` by its full name.
    for name in [n for n in sys.modules if n == "anthropic" or n.startswith("anthropic.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "anthropic", None)


def test_require_names_the_extra_the_feature_and_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(MissingExtraError) as caught:
        require("mcp", "the MCP server")
    assert caught.value.extra == "mcp"
    assert caught.value.name == "mcp"
    assert str(caught.value).startswith(
        "the MCP server needs memdir's [mcp] extra (the mcp package is not installed); "
        "add it with: "
    )
    assert str(caught.value).endswith("[mcp]'")


def test_the_mcp_extra_does_not_need_the_anthropic_sdk(no_anthropic: None) -> None:
    require("mcp", "the MCP server")  # the memory tool it serves is memdir's own


def test_installed_extras_pass() -> None:
    require("anthropic", "the anthropic selector")
    require("mcp", "the MCP server")


@pytest.mark.parametrize(
    ("marker", "installer"),
    [
        ("pipx_metadata.json", "pipx install --force"),
        ("uv-receipt.toml", "uv tool install --force"),
    ],
)
def test_the_command_is_the_installers_own(
    marker: str, installer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / marker).write_text("{}", encoding="utf-8")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(extras, "_requirement", lambda extra: (f"/w/memdir.whl[{extra}]", False))
    assert install_command("mcp") == f"{installer} '/w/memdir.whl[mcp]'"


def test_the_source_is_what_the_installer_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    class Dist:
        def __init__(self, record: dict[str, object] | None) -> None:
            self.text = None if record is None else json.dumps(record)

        def read_text(self, name: str) -> str | None:
            assert name == "direct_url.json"
            return self.text

    from importlib import metadata

    cases = [
        ({"url": "file:///tmp/d/memdir-0.1.0-py3-none-any.whl", "archive_info": {}},
         ("/tmp/d/memdir-0.1.0-py3-none-any.whl[mcp]", False)),
        ({"url": "file:///src/my%20memdir", "dir_info": {"editable": True}},
         ("/src/my memdir[mcp]", True)),
        ({"url": "https://example.invalid/memdir.git", "vcs_info": {"vcs": "git"}},
         ("memdir[mcp] @ git+https://example.invalid/memdir.git", False)),
        (None, ("memdir[mcp]", False)),
    ]  # fmt: skip
    for record, expected in cases:
        monkeypatch.setattr(metadata, "distribution", lambda name, r=record: Dist(r))
        assert extras._requirement("mcp") == expected


def test_auto_with_a_key_but_no_sdk_answers_offline_and_says_why(no_anthropic: None) -> None:
    selector = choose_selector("auto", env={"ANTHROPIC_API_KEY": "sk-ant-test-0123456789"})
    assert isinstance(selector, AnthropicSelector)
    headers = [
        header("release-freeze.md", "trunk is frozen during the release review"),
        header("grafana.md", "the Grafana dashboard for checkout latency"),
    ]
    result = asyncio.run(selector.select("can I merge during the release freeze", headers))
    offline = asyncio.run(
        LexicalSelector().select("can I merge during the release freeze", headers)
    )
    assert result.selector == "lexical" and result.requested == "anthropic"
    assert result.selected == offline.selected == ("release-freeze.md",)
    assert result.degraded is not None
    assert result.degraded.startswith(
        "the anthropic selector needs memdir's [anthropic] extra (the anthropic package is not "
        "installed); add it with: "
    )


def test_extraction_without_the_sdk_is_an_error_result(no_anthropic: None, tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    transcript = tmp_path / "session.jsonl"
    message = {"role": "user", "content": "always use pnpm"}
    line = {"type": "user", "message": message, "cwd": str(tmp_path)}
    transcript.write_text(json.dumps(line) + "\n", encoding="utf-8")
    result = asyncio.run(run_extraction(transcript, memory_dir))
    assert result.status == "error"
    assert result.reason is not None
    assert result.reason.startswith("extraction needs memdir's [anthropic] extra")


def test_extract_without_the_sdk_says_one_line_and_exits_2(
    no_anthropic: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memdir.faces.cli import main

    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("", encoding="utf-8")
    assert main(["extract", "--dir", str(memory_dir), str(transcript)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("memdir extract: error: extraction needs memdir's [anthropic] extra ")


def test_the_memory_tool_needs_no_sdk(
    no_anthropic: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from memdir.faces.cli import main

    monkeypatch.delitem(sys.modules, "memdir.writing.memory_tool", raising=False)
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    create = {"command": "create", "path": "/memories/a.md", "file_text": "hello\n"}
    assert main(["tool", "--dir", str(memory_dir), json.dumps(create)]) == 0
    view = {"command": "view", "path": "/memories/a.md"}
    assert main(["tool", "--dir", str(memory_dir), json.dumps(view)]) == 0
    out = capsys.readouterr().out
    assert out == (
        "File created successfully at: /memories/a.md; indexed in MEMORY.md at line 1 "
        "(no need to add a line)\n"
        "Here's the content of /memories/a.md with line numbers:\n     1\thello\n     2\t\n"
    )


def test_the_vscode_bundle_names_the_setting_not_a_command(
    no_anthropic: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extras, "_installer", lambda: extras.VSCODE_BUNDLE_INSTALLER)
    with pytest.raises(MissingExtraError) as caught:
        require("anthropic", "extraction")
    assert str(caught.value) == (
        "extraction needs memdir's [anthropic] extra (the anthropic package is not "
        "installed); the server bundled with the VS Code extension has only the core: install "
        "memdir with [anthropic] in a Python environment and set memdir.importStrategy to "
        "fromEnvironment"
    )
