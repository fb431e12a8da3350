"""``memdir tool`` and ``memdir extract`` from the command line: output and exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from memdir.extract.sandbox import extraction_lock
from memdir.faces.cli import main
from memhelpers import sdk_answered_by


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    """A topic file with frontmatter (own copy: ``conftest`` is ambiguous with tests/lsp)."""
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


ERROR = 1
USAGE = 2


def tool(capsys: pytest.CaptureFixture[str], directory: Path, command: object) -> tuple[int, str]:
    raw = command if isinstance(command, str) else json.dumps(command)
    code = main(["tool", "--dir", str(directory), raw])
    captured = capsys.readouterr()
    return code, captured.out if code != USAGE else captured.err


def test_tool_prints_the_result_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    create = {
        "command": "create",
        "path": "/memories/use-pnpm.md",
        "file_text": topic("use-pnpm", "the user wants pnpm"),
    }
    assert tool(capsys, tmp_path, create) == (
        0,
        "File created successfully at: /memories/use-pnpm.md; indexed in MEMORY.md at line 1 "
        "(no need to add a line)\n",
    )
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == (
        "- [Use pnpm](use-pnpm.md) — the user wants pnpm\n"
    )
    code, out = tool(capsys, tmp_path, {"command": "view", "path": "/memories"})
    assert code == 0
    assert out.startswith("Here're the files and directories up to 2 levels deep in /memories")


def test_tool_errors_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.md").write_text("x\n", encoding="utf-8")
    assert tool(
        capsys, tmp_path, {"command": "create", "path": "/memories/a.md", "file_text": ""}
    ) == (
        ERROR,
        "File /memories/a.md already exists\n",
    )
    assert tool(capsys, tmp_path, {"command": "view", "path": "/memories/../x"}) == (
        ERROR,
        "Path /memories/../x would escape /memories directory\n",
    )
    assert tool(capsys, tmp_path, {"command": "delete", "path": "/memories"}) == (
        ERROR,
        "Cannot delete the /memories directory itself\n",
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["view"]', "must be a JSON object"),
        ('{"command": "explode"}', "unknown memory command"),
        ('{"command": "insert", "path": "/memories/a.md"}', "insert_line"),
    ],
)
def test_tool_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: str, message: str
) -> None:
    code, err = tool(capsys, tmp_path, raw)
    assert code == USAGE
    assert err.startswith("memdir tool: error: ")
    assert message in err
    assert list(tmp_path.iterdir()) == []


def test_tool_reads_stdin_and_missing_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"command": "view", "path": "/memories"}'))
    assert main(["tool", "--dir", str(tmp_path), "-"]) == 0
    assert "/memories" in capsys.readouterr().out
    assert main(["tool", "--dir", str(tmp_path / "absent"), "{}"]) == USAGE
    assert "no such directory" in capsys.readouterr().err


def test_tool_as_a_subprocess(tmp_path: Path) -> None:
    command = json.dumps({"command": "create", "path": "/memories/a.md", "file_text": "x\n"})
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "tool", "--dir", str(tmp_path), command],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0,
        "File created successfully at: /memories/a.md; indexed in MEMORY.md at line 1 "
        "(no need to add a line)\n",
        "",
    )


# --- extract -------------------------------------------------------------------------------------


def conversation(path: Path, *lines: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def user(content: object) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}}


def fake_client(monkeypatch: pytest.MonkeyPatch, *replies: list[dict[str, Any]]) -> list[Any]:
    """Make ``anthropic.AsyncAnthropic()`` (as the CLI calls it) answer with ``replies``."""
    seen: list[Any] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        content = replies[len(seen) - 1]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        return httpx2.Response(
            200,
            json={
                "id": "msg",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    sdk_answered_by(monkeypatch, handle, api_key="test")
    return seen


def test_extract_dry_run_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    transcript = conversation(
        tmp_path / "t.jsonl", user("I am the on-call lead this month."), assistant()
    )
    text = topic("on-call-lead", "the user leads on-call this month", "user")
    seen = fake_client(
        monkeypatch,
        [
            {
                "type": "tool_use",
                "id": "t1",
                "name": "memory",
                "input": {"command": "create", "path": "/memories/on-call.md", "file_text": text},
            }
        ],
        [{"type": "text", "text": "Saved."}],
    )
    arguments = ["--dir", str(memory), "--project", str(tmp_path), "--model", "claude-test"]
    code = main(["extract", str(transcript), *arguments, "--dry-run", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["status"] == "completed"
    assert data["dry_run"] is True
    assert data["created"] == ["on-call.md", "MEMORY.md"]
    assert "+name: on-call-lead" in data["changes"][0]["diff"]
    assert seen[0]["model"] == "claude-test"
    assert list(memory.iterdir()) == []  # a dry run: nothing written, no lock in the dir


def test_extract_text_report_and_skip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    transcript = conversation(tmp_path / "t.jsonl", user("We deploy on Tuesdays only."))
    fake_client(monkeypatch, [{"type": "text", "text": "Nothing to save."}])
    assert main(["extract", str(transcript), "--dir", str(memory)]) == 0
    assert capsys.readouterr().out == "nothing saved\n-- 1 turn(s), end_turn\n"

    wrote = assistant(
        {
            "type": "tool_use",
            "id": "w",
            "name": "Write",
            "input": {"file_path": str(memory / "x.md"), "content": "x"},
        }
    )
    conversation(transcript, user("remember this"), wrote)
    assert main(["extract", str(transcript), "--dir", str(memory)]) == 0
    assert capsys.readouterr().out.startswith(
        "skipped: the recent turns already wrote memory (Write"
    )


def test_extract_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    transcript = conversation(tmp_path / "t.jsonl", user("hello there"))
    assert main(["extract", str(tmp_path / "absent.jsonl"), "--dir", str(memory)]) == USAGE
    assert "no such transcript" in capsys.readouterr().err
    assert main(["extract", str(transcript), "--dir", str(memory), "--project", "/nope"]) == USAGE
    capsys.readouterr()

    with extraction_lock(memory):
        assert main(["extract", str(transcript), "--dir", str(memory)]) == 75
    assert capsys.readouterr().out.startswith("busy: another extraction is running")

    def refuse(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            529, json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
        )

    sdk_answered_by(monkeypatch, refuse, api_key="t")
    assert main(["extract", str(transcript), "--dir", str(memory)]) == ERROR
    captured = capsys.readouterr()
    assert captured.out.startswith("error: OverloadedError (HTTP 529)")
    assert captured.err == ""  # said once, in the report (not again by the module's log)


def test_extract_without_credentials_says_so_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's TypeError becomes recall's sentence: one line, exit 2 (a setup mistake)."""
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CONFIG_DIR",
        "ANTHROPIC_FEDERATION_RULE_ID",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no SDK profile on disk either
    memory = tmp_path / "memory"
    memory.mkdir()
    transcript = conversation(tmp_path / "t.jsonl", user("We deploy on Tuesdays only."))
    for extra in ([], ["--json"], ["--dry-run"]):
        assert main(["extract", str(transcript), "--dir", str(memory), *extra]) == USAGE
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (
            "memdir extract: error: no API key configured "
            "(set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN)\n"
        )
    # A config dir without the profile: the SDK's own words, once, no traceback.
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "anthropic"))
    assert main(["extract", str(transcript), "--dir", str(memory)]) == ERROR
    captured = capsys.readouterr()
    assert captured.out.startswith("error: CredentialsError: Config file not found at ")
    assert captured.err == ""
