"""Issue 26: a hostile ``memdir.toml`` (or ``[tool.memdir]`` in a project's pyproject.toml).

A memory dir and its project travel with repositories, and so do their settings files. Whatever
such a file sets, it sends memory content to no host the user did not name (the
``openai-compatible`` selector's base URL: only this machine, under every spelling of the key and
of the host, as the HTTP client itself would connect), names no path (no setting is one), runs
no command, and cannot flood the terminal or the editor's log with what it holds.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import pytest
from memdir.config import (
    DEFAULT_OPENAI_BASE_URL,
    Settings,
    base_url_error,
    load_settings,
    settings_from_mapping,
)
from memhelpers import run_memdir, selector_env_vars, topic

MakeDir = Callable[[dict[str, str | bytes]], Path]
MEMORY = {
    "MEMORY.md": "- [Deploys](deploys.md) — how deploys to staging work\n",
    "deploys.md": topic("deploys", "how deploys to staging work"),
}

#: Every spelling a settings file might try for the base URL: the key and its aliases are
#: checked, the rest are unknown keys (ignored).
SPELLINGS = (
    "openai_base_url", "openaiBaseUrl", "openai-base-url", "OPENAI_BASE_URL", "openaiBaseURL",
    "OpenaiBaseUrl", "base_url", "baseUrl", "openai_api_base", "url",
)  # fmt: skip
#: Hosts off this machine, spelled to slip past a check that parses the URL differently from
#: the client that connects.
ELSEWHERE = (
    "https://evil.example/v1",
    "http://localhost.evil.example/v1",
    "http://127.0.0.1.evil.example/v1",
    "http://evil.example@127.0.0.1/v1",
    "http://evil.example\\@127.0.0.1/v1",
    "http://127.0.0.1\\@evil.example/v1",
    "http://127.0.0.1:11434@evil.example/v1",
    "http://127.0.0.1@evil.example/v1",
    "http://user:pw@evil.example/v1",
    "http://[2001:db8::1]/v1",
    "http://[::ffff:203.0.113.9]/v1",
    "http://evil.example#@127.0.0.1/v1",
    "http://evil.example?@127.0.0.1/v1",
    "http://127.0.0.1\t.evil.example/v1",
    "http://127.0.0.1\n.evil.example/v1",
    "http://127.0.0.1%2f@evil.example/v1",
    "http://0x7f.evil.example/v1",
    "http://evil.example%00.127.0.0.1/v1",
    "http://127。0。0。1.evil.example/v1",
    "ftp://127.0.0.1/v1",
    "file:///etc/passwd",
)


@pytest.mark.parametrize("url", ELSEWHERE)
@pytest.mark.parametrize("key", SPELLINGS)
def test_no_spelling_names_a_host_elsewhere(key: str, url: str) -> None:
    settings = settings_from_mapping({key: url})
    assert settings.openai_base_url == DEFAULT_OPENAI_BASE_URL
    assert settings.errors  # said, not silently dropped


@pytest.mark.parametrize("url", ELSEWHERE)
def test_memdir_toml_and_pyproject_name_no_host_elsewhere(url: str, tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    toml = url.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    (memory / "memdir.toml").write_text(f'openai_base_url = "{toml}"\nopenai_model = "m"\n')
    assert load_settings(memory).openai_base_url == DEFAULT_OPENAI_BASE_URL
    (memory / "memdir.toml").unlink()
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.memdir]\nopenaiBaseUrl = "{toml}"\nopenai_model = "m"\n'
    )
    assert load_settings(memory, tmp_path).openai_base_url == DEFAULT_OPENAI_BASE_URL


def test_editor_settings_name_no_host_elsewhere(tmp_path: Path) -> None:
    from memdir_lsp.settings import parse_editor_settings

    for url in ELSEWHERE:
        editor, errors = parse_editor_settings({"openaiBaseUrl": url, "openaiModel": "m"})
        assert editor.for_directory(tmp_path).openai_base_url == DEFAULT_OPENAI_BASE_URL
        assert errors


#: URLs a settings file may name: this machine, however written.
LOOPBACK = (
    "http://127.0.0.1:11434/v1",
    "http://localhost:8080/v1",
    "http://LOCALHOST:8080/v1",
    "http://[::1]:8000/v1",
    "https://127.0.0.1/v1",
    "http://127.255.255.254/v1",
    "http://[0:0:0:0:0:0:0:1]/v1",
)


@pytest.mark.parametrize("url", LOOPBACK + ELSEWHERE)
def test_an_accepted_url_is_where_the_client_connects(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check and the HTTP client agree on the host: a URL a settings file may name is one
    urllib connects to on this machine (the connection is recorded, never made)."""
    from memdir.recall.select_openai import _post

    reached: list[str] = []

    def record(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
        reached.append(address[0])
        raise ConnectionRefusedError("recorded only")

    monkeypatch.setattr(socket, "create_connection", record)
    if base_url_error(url, remote=False) is not None:
        assert url not in LOOPBACK
        return
    settings = settings_from_mapping({"openai_base_url": url})
    with pytest.raises(OSError):
        _post(f"{settings.openai_base_url}/chat/completions", b"{}", {}, 1.0)
    assert reached, url
    for host in reached:
        assert host.lower() == "localhost" or ipaddress.ip_address(host.split("%")[0]).is_loopback


def test_no_setting_is_a_path() -> None:
    """No setting names a file or folder, so none can point outside the dir: they are numbers,
    codes, names, or the base URL checked above. A new setting must be reviewed here."""
    assert {f.name for f in fields(Settings)} - {"source", "errors", "load_error"} == {
        "index_line_limit", "severity", "select", "ignore", "recall_mode", "selector", "model",
        "openai_base_url", "openai_model", "openai_timeout", "trigger", "verify_after_days",
        "target", "any_format", "preview",
    }  # fmt: skip
    for key in ("memory_dir", "project_root", "state_dir", "cache_dir", "log_file", "path"):
        assert f"unknown setting `{key}`" in settings_from_mapping({key: "/etc"}).errors


def _memdir(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in selector_env_vars()}
    return run_memdir(*args, cwd=cwd, env=env, timeout=120)


def test_no_setting_runs_a_command(make_dir: MakeDir, tmp_path: Path) -> None:
    """Every setting set to shell syntax that would leave a marker: lint, index and recall
    read the file and run nothing."""
    marker = tmp_path / "pwned"
    shell = f"$(touch {marker}); `touch {marker}`; touch {marker} #"
    root = make_dir(MEMORY)
    keys = [f.name for f in fields(Settings) if f.name not in ("source", "errors", "load_error")]
    lines = [f"{key} = {shell!r}" for key in keys if key != "severity"]
    (root / "memdir.toml").write_text("\n".join(lines) + f"\n[severity]\nMEM001 = {shell!r}\n")
    for args in (("lint", str(root)), ("index", str(root)), ("recall", "deploys", str(root))):
        done = _memdir(*args, cwd=tmp_path)
        assert "Traceback" not in done.stderr, done.stderr
    assert not marker.exists()


def test_a_key_cannot_write_to_the_terminal(make_dir: MakeDir, tmp_path: Path) -> None:
    """A key of a hostile file holding terminal escapes (retitle the window, hide text) is
    quoted in the warning, never written raw."""
    root = make_dir(MEMORY)
    (root / "memdir.toml").write_text(
        '"\\u001b]0;owned\\u0007\\u001b[2J" = 1\nselector = "\\u001b[31mred"\n'
    )
    done = _memdir("lint", str(root), cwd=tmp_path)
    assert "unknown setting" in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr


def test_thousands_of_problems_are_counted_not_listed(make_dir: MakeDir, tmp_path: Path) -> None:
    root = make_dir(MEMORY)
    (root / "memdir.toml").write_text(
        "".join(f"bogus_{n} = {'x' * 100!r}\n" for n in range(1000))
        + f"index_line_limit = {'9' * 5000!r}\n"
    )
    done = _memdir("lint", str(root), cwd=tmp_path)
    warnings = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(warnings) <= 22, len(warnings)  # MAX_SETTING_ERRORS and the count
    assert "more problems" in done.stderr
    assert len(done.stderr) < 20_000
