"""``memdir recall``: the JSON contract, session persistence, budget, errors and key hygiene."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import httpx2
import pytest
from memdir import constants as C
from memdir.faces.cli import main
from memdir.recall.surface import Session
from memhelpers import EXAMPLES, selector_env_vars

#: Defined here rather than imported from conftest: another conftest.py in a subdirectory would
#: shadow the module name ``conftest`` and break the import.


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


SENTINEL = "sk-ant-api03-SENTINEL-0cc175b9c0f1b6a831c399e269772661"
FREEZE_QUERY = "can I merge while the trunk is frozen for the app-store release?"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["recall", *args, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def subprocess_run(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in selector_env_vars()}
    return subprocess.run(
        [sys.executable, "-m", "memdir", "recall", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        check=False,
    )


def test_json_keys_and_types(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "lexical")
    assert data["triggered"] is True
    assert isinstance(data["reason"], str) and data["reason"]
    assert data["selector"] == "lexical" and data["requested_selector"] == "lexical"
    assert data["degraded"] is None
    selected = data["selected_memories"]
    assert isinstance(selected, list) and all(isinstance(p, str) for p in selected)
    assert "project-release-freeze.md" in selected
    assert all("\\" not in p and not p.startswith("/") for p in selected)
    assert data["surfaced"], "the freeze memory surfaces"
    for item in data["surfaced"]:
        assert set(item) == {"path", "bytes", "truncated", "text"}
        assert isinstance(item["path"], str) and item["path"] in selected
        assert isinstance(item["bytes"], int) and isinstance(item["truncated"], bool)
        assert item["text"].startswith("Memory: ")
    assert data["attachment"].startswith(C.RELEVANT_MEMORIES_INTRO)
    assert data["attachment"].count("\nMemory: ") == len(data["surfaced"])
    budget = data["budget"]
    assert budget["limit"] == C.SESSION_BUDGET_BYTES
    assert budget["used"] == budget["surfaced_now"] > 0
    assert budget["left"] == budget["limit"] - budget["used"]
    assert isinstance(data["candidates"], list) and len(data["candidates"]) == 12
    assert set(data["candidates"][0]) == {"path", "type", "mtime", "description"}
    assert isinstance(data["elapsed_ms"], int | float) and data["elapsed_ms"] >= 0
    assert set(data["timings"]) >= {"scan_ms", "select_ms", "read_ms", "total_ms"}
    assert isinstance(data["why"], dict) and set(data["why"]) == set(selected)
    assert data["manifest"].startswith("- [")


def test_human_output_is_the_attachment(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["recall", FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "lexical"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    data = run_json(capsys, *args[1:])
    assert out == data["attachment"]  # byte for byte, no newline added
    assert out.startswith(C.RELEVANT_MEMORIES_INTRO + "\n\nMemory: ")
    assert "project-release-freeze.md" in out
    assert "-- triggered:" in err and "-- selector lexical" in err and "-- budget" in err
    assert C.RELEVANT_MEMORIES_INTRO not in err


def test_target_seed_prints_the_spec_attachment(capsys: pytest.CaptureFixture[str]) -> None:
    args = [FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "lexical", "--target", "seed"]
    assert main(["recall", *args]) == 0
    out, _err = capsys.readouterr()
    assert out.startswith("<system-reminder>\nMemory (saved ")
    assert out.endswith("</system-reminder>")


def test_not_triggered_prints_nothing_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    query = "用户行为日志保留多久"
    assert main(["recall", query, "--dir", str(EXAMPLES), "--trigger", "claude-code"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "-- not triggered: single word" in err
    data = run_json(capsys, query, "--dir", str(EXAMPLES), "--trigger", "multilingual")
    assert data["triggered"] is True
    assert "project-data-retention.md" in data["selected_memories"]


def test_session_file_dedupes_across_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "session.json"
    args = (FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "lexical", "--session", str(state))
    first = run_json(capsys, *args)
    surfaced = [i["path"] for i in first["surfaced"]]
    assert "project-release-freeze.md" in surfaced
    saved = json.loads(state.read_text())
    assert saved["budget_used"] == first["budget"]["used"] > 0
    assert len(saved["surfaced"]) == len(surfaced)

    second = run_json(capsys, *args, "--target", "seed")
    assert second["surfaced"] == []
    assert "project-release-freeze.md" not in [c["path"] for c in second["candidates"]]
    before = {d["path"]: d["reason"] for d in second["dropped"] if d["stage"] == "before-select"}
    assert before["project-release-freeze.md"] == "already surfaced in this session"
    # Claude Code 2.1.328 still lists it in the manifest; it is not surfaced again either.
    listed = run_json(capsys, *args)
    assert "project-release-freeze.md" in [c["path"] for c in listed["candidates"]]
    assert listed["surfaced"] == []
    assert second["budget"]["used"] == first["budget"]["used"]

    # Compaction: the budget restarts and the memory may surface again.
    third = run_json(capsys, *args, "--compact")
    assert "project-release-freeze.md" in [i["path"] for i in third["surfaced"]]
    assert third["budget"]["used"] == first["budget"]["used"]
    assert json.loads(state.read_text())["compactions"] == 1


def test_mark_read_excludes_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.json"
    data = run_json(
        capsys,
        FREEZE_QUERY,
        "--dir",
        str(EXAMPLES),
        "--selector",
        "lexical",
        "--session",
        str(state),
        "--mark-read",
        "project-release-freeze.md",
    )
    assert "project-release-freeze.md" not in [i["path"] for i in data["surfaced"]]
    # Listed in the manifest as the agent lists it, but never offered to the lexical selector.
    assert "project-release-freeze.md" in [c["path"] for c in data["candidates"]]
    assert Session.load(state).seen(EXAMPLES / "project-release-freeze.md")


def test_budget_spent_in_the_session_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s.json"
    Session(budget_used=C.SESSION_BUDGET_BYTES).save(state)
    data = run_json(capsys, FREEZE_QUERY, "--dir", str(EXAMPLES), "--session", str(state))
    assert data["triggered"] is False
    assert "budget spent" in data["reason"]
    assert data["budget"] == {
        "used": C.SESSION_BUDGET_BYTES,
        "left": 0,
        "limit": C.SESSION_BUDGET_BYTES,
        "surfaced_now": 0,
    }


def test_budget_runs_out_from_the_shell(
    make_dir: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = ("deploy checklist line " * 4 + "\n") * 60  # each file is cut at 4096 bytes
    root = make_dir(
        {
            f"deploy-{i:02}.md": topic(f"deploy-{i}", f"deploy checklist part {i}", body=body)
            for i in range(30)
        }
    )
    state = tmp_path / "s.json"
    args = (
        "what is the deploy checklist?",
        "--dir",
        str(root),
        "--selector",
        "lexical",
        "--session",
        str(state),
    )
    used = []
    for _ in range(6):
        data = run_json(capsys, *args)
        used.append(data["budget"]["used"])
        if not data["triggered"]:
            break
    assert data["triggered"] is False and "budget spent" in data["reason"]
    assert used == sorted(used) and used[-1] >= C.SESSION_BUDGET_BYTES


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not a session file"),
        ("[]", "must be a JSON object"),
        ('{"read": 3}', "malformed session"),
        (b"\xff\xfe\x00bad", "not UTF-8"),
    ],
)
def test_bad_session_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, expected: str
) -> None:
    state = tmp_path / "s.json"
    if isinstance(content, bytes):
        state.write_bytes(content)
    else:
        state.write_text(content)
    assert main(["recall", FREEZE_QUERY, "--dir", str(EXAMPLES), "--session", str(state)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("memdir recall: error: bad session file")
    assert expected in err
    assert state.read_bytes() == (content if isinstance(content, bytes) else content.encode())


def test_bad_session_file_from_a_shell(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    state.write_text("{oops")
    proc = subprocess_run(FREEZE_QUERY, "--dir", str(EXAMPLES), "--session", str(state))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--dir", "/no/such/memdir"], "no such directory"),
        (["--dir", str(EXAMPLES), "--mark-read", "../../etc/passwd"], "outside the memory dir"),
        (["--dir", str(EXAMPLES), "--timeout", "0"], "--timeout must be"),
    ],
)
def test_user_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    assert main(["recall", FREEZE_QUERY, *args]) == 2
    _, err = capsys.readouterr()
    assert expected in err and err.count("\n") == 1


def test_bad_flag_value_exits_2() -> None:
    proc = subprocess_run(FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "gpt")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_anthropic_without_a_key_degrades(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "anthropic")
    assert data["requested_selector"] == "anthropic"
    assert data["selector"] == "lexical"
    assert "no API key configured" in data["degraded"]
    assert "project-release-freeze.md" in data["selected_memories"]


def test_anthropic_without_a_key_from_a_shell() -> None:
    proc = subprocess_run(FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "anthropic")
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr
    assert "fell back from anthropic: no API key configured" in proc.stderr
    assert proc.stdout.startswith(C.RELEVANT_MEMORIES_INTRO)


def test_auto_without_a_key_is_lexical(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, FREEZE_QUERY, "--dir", str(EXAMPLES))
    assert data["selector"] == data["requested_selector"] == "lexical"
    assert data["degraded"] is None


def test_settings_file_and_flag_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "a.md").write_text(topic("a", "部署流程和回滚步骤"))
    (root / "memdir.toml").write_text('trigger = "claude-code"\nselector = "lexical"\n')
    assert run_json(capsys, "部署流程怎么走", "--dir", str(root))["triggered"] is False
    data = run_json(capsys, "部署流程怎么走", "--dir", str(root), "--trigger", "multilingual")
    assert data["triggered"] is True and data["selected_memories"] == ["a.md"]


class FakeAPIClient(anthropic.AsyncAnthropic):
    """The SDK client the CLI makes, pointed at a fake API that leaks the key in its error."""

    def __init__(self, **kwargs: Any) -> None:
        def leak(request: httpx2.Request) -> httpx2.Response:
            body = json.loads(request.content)
            assert body["model"] == "claude-haiku-4-5" and body["max_tokens"] == 2560
            assert body["messages"][-1]["content"][0]["text"].startswith(
                "Select memories relevant to:\n"
            )
            error = {"type": "authentication_error", "message": f"bad key {SENTINEL}"}
            return httpx2.Response(401, json={"type": "error", "error": error})

        super().__init__(
            **kwargs,
            base_url="http://anthropic.memdir.test",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(leak)),
        )


def test_key_never_in_output_or_logs(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    caplog.set_level("DEBUG")
    monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL)
    monkeypatch.setattr(anthropic, "AsyncAnthropic", FakeAPIClient)
    state = tmp_path / "s.json"
    common = [
        FREEZE_QUERY,
        "--dir",
        str(EXAMPLES),
        "--model",
        "claude-haiku-4-5",
        "--recent-tools",
        "Bash,psql",
        "--session",
        str(state),
    ]
    assert main(["recall", *common, "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["requested_selector"] == "anthropic"  # auto with a key
    assert data["model"] == "claude-haiku-4-5"
    assert data["selector"] == "lexical"
    assert "API error 401 authentication_error" in data["degraded"]
    assert "[redacted]" in data["degraded"]
    assert main(["recall", *common, "--compact"]) == 0
    human_out, human_err = capsys.readouterr()
    assert "fell back from anthropic" in human_err
    for text in (out, err, human_out, human_err, caplog.text, state.read_text()):
        assert SENTINEL not in text


def test_registering_recall_loads_no_selector() -> None:
    # Every `memdir` run registers the recall parser: the selectors load only when it runs.
    code = (
        "import sys; from memdir.faces.cli import build_parser; build_parser(); "
        "print('memdir.recall.select' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"


class AllNamesClient(anthropic.AsyncAnthropic):
    """A fake API whose model picks every manifest name, fenced and with a copied tag."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        def pick(request: httpx2.Request) -> httpx2.Response:
            body = json.loads(request.content)
            AllNamesClient.bodies.append(body)
            manifest = body["messages"][0]["content"][0]["text"]
            names = [line[2:].split(" (")[0] for line in manifest.splitlines()[1:]]
            answer = "```json\n" + json.dumps({"selected_memories": names}) + "\n```"
            content = [{"type": "text", "text": answer}]
            return httpx2.Response(
                200,
                json={
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": content,
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            )

        super().__init__(
            **kwargs,
            base_url="http://anthropic.memdir.test",
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(pick)),
        )


def test_anthropic_recall_prints_the_agent_attachment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memdir.agent.scan import scan
    from memdir.recall.select import build_request
    from memdir.recall.surface import render_attachment, surface_file
    from memdir.target import CLAUDE_CODE_2_1_328

    monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL)
    monkeypatch.setattr(anthropic, "AsyncAnthropic", AllNamesClient)
    AllNamesClient.bodies.clear()
    args = ["recall", FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "anthropic"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    headers = scan(EXAMPLES).candidates
    [body] = AllNamesClient.bodies
    expected_body = build_request(FREEZE_QUERY, headers, target=CLAUDE_CODE_2_1_328).to_body()
    assert body == expected_body
    # Every name was chosen, tags and fence stripped: the first five surface, in manifest order.
    first_five = [surface_file(h.path, EXAMPLES, target=CLAUDE_CODE_2_1_328) for h in headers[:5]]
    assert out == render_attachment(first_five, CLAUDE_CODE_2_1_328)
    assert "-- selector anthropic" in err and "over 5 files this turn" in err
