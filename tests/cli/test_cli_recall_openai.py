"""``memdir recall --selector openai-compatible`` against a fake model server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import CHAT_PATH, FakeOpenAI, answer
from memdir import constants as C
from memdir.faces.cli import main
from memhelpers import EXAMPLES, selector_env_vars

MODEL = "llama3.2"
FREEZE_QUERY = "can I merge while the trunk is frozen for the app-store release?"
FREEZE = "project-release-freeze.md"


def recall(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    assert main(["recall", FREEZE_QUERY, "--dir", str(EXAMPLES), *args]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_the_models_choice_is_printed_like_any_selectors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLES.parent)  # files are named from the working directory
    with FakeOpenAI(answer(FREEZE, "not-a-memory.md")) as fake:
        out, err = recall(
            capsys, "--selector", "openai-compatible", "--model", MODEL, "--base-url", fake.base_url
        )
    assert len(fake.requests) == 1
    sent = fake.requests[0]
    assert sent.path == CHAT_PATH and sent.body is not None and sent.body["model"] == MODEL
    assert out.startswith(C.RELEVANT_MEMORIES_INTRO) and FREEZE in out
    lines = err.splitlines()
    assert lines[1].startswith("-- selector openai-compatible · ")
    assert "1 selected · 1 surfaced" in lines[1]
    assert any(
        line.startswith(f"--   memory/{FREEZE} (")
        and line.endswith(f"chosen by {MODEL} (rank 1 of 1)")
        for line in lines
    ), err
    assert "-- note: dropped 1 name(s) not in the manifest: 'not-a-memory.md'" in lines


def test_a_failure_prints_the_lexical_selection_and_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAI(lambda body: (500, {"error": {"message": "out of memory"}})) as fake:
        out, err = recall(
            capsys, "--selector", "openai-compatible", "--model", MODEL, "--base-url", fake.base_url
        )
    assert len(fake.requests) == 1
    assert FREEZE in out
    reason = f"HTTP 500 from {fake.base_url}/chat/completions: out of memory"
    assert f"-- selector lexical (fell back from openai-compatible: {reason})" in err


def test_without_a_model_it_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = recall(capsys, "--selector", "openai-compatible", "--json")
    data: dict[str, Any] = json.loads(out)
    assert data["requested_selector"] == "openai-compatible" and data["selector"] == "lexical"
    assert data["degraded"].startswith("no model configured for the openai-compatible selector")
    assert FREEZE in data["selected_memories"]


def test_settings_file_configures_it_and_auto_uses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "memory"
    shutil.copytree(EXAMPLES, root)
    with FakeOpenAI(answer(FREEZE)) as fake:
        (root / "memdir.toml").write_text(
            f'openai_base_url = "{fake.base_url}"\nopenai_model = "{MODEL}"\n'
        )
        # auto, no Anthropic credentials, a local model configured: the local model.
        assert main(["recall", FREEZE_QUERY, "--dir", str(root), "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        # --model under openai-compatible names the local model.
        assert (
            main(
                [
                    *("recall", FREEZE_QUERY, "--dir", str(root), "--json"),
                    *("--selector", "openai-compatible", "--model", "qwen3"),
                ]
            )
            == 0
        )
        flagged = json.loads(capsys.readouterr().out)
        # Under auto, --model names the model auto runs: here the local one.
        assert main(["recall", FREEZE_QUERY, "--dir", str(root), "--model", "gemma3"]) == 0
        capsys.readouterr()
    assert data["selector"] == data["requested_selector"] == "openai-compatible"
    assert data["degraded"] is None and data["selected_memories"] == [FREEZE]
    assert [r.body["model"] for r in fake.requests if r.body] == [MODEL, "qwen3", "gemma3"]
    assert flagged["selector"] == "openai-compatible"


def test_a_bad_base_url_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["recall", FREEZE_QUERY, "--dir", str(EXAMPLES), "--base-url", "localhost:11434"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--base-url must be an http:// or https:// URL" in err and err.count("\n") == 1


def test_a_hung_server_does_not_hold_the_process(tmp_path: Path) -> None:
    # From a shell: the selector gives up after its timeout and the process exits, printing the
    # lexical selection, while the server still holds its answer.
    env = {k: v for k, v in os.environ.items() if k not in selector_env_vars()}
    with FakeOpenAI(answer(FREEZE), hold=True) as fake:
        proc = subprocess.run(
            [
                *(sys.executable, "-m", "memdir", "recall", FREEZE_QUERY),
                *("--dir", str(EXAMPLES), "--selector", "openai-compatible"),
                *("--model", MODEL, "--base-url", fake.base_url, "--timeout", "0.5"),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        fake.release()
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert len(fake.requests) == 1
    assert (
        f"fell back from openai-compatible: no answer from {fake.base_url} within the 0.5 s "
        "timeout" in proc.stderr
    )
    assert FREEZE in proc.stdout
