"""``memdir recall --explain FILE``: after the summary on stderr, and in ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memdir import constants as C
from memdir.agent.scan import scan
from memdir.agent.topic import with_bodies
from memdir.faces.cli import main
from memdir.recall.lexical import select_lexical
from memhelpers import EXAMPLES

FREEZE_QUERY = "can I merge while the trunk is frozen for the app-store release?"


@pytest.fixture(autouse=True)
def _beside_the_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are named from the working directory: here, ``memory/…``."""
    monkeypatch.chdir(EXAMPLES.parent)


def recall(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    base = ["recall", FREEZE_QUERY, "--dir", str(EXAMPLES), "--selector", "lexical"]
    assert main([*base, *args]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_explain_on_stderr_after_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    selection = select_lexical(
        FREEZE_QUERY, with_bodies(scan(EXAMPLES).candidates), (), C.SELECT_MAX_FILES
    )
    out, err = recall(
        capsys,
        "--explain",
        "project-release-freeze.md",
        "--explain",
        "project-api-versioning.md",
        "--explain",
        "MEMORY.md",
    )
    plain, _ = recall(capsys)
    assert out == plain  # stdout stays exactly the attachment
    lines = err.splitlines()
    budget = next(i for i, line in enumerate(lines) if line.startswith("-- budget"))
    why = lines[budget + 1 :]
    best = selection.selected[0]
    assert best.rel_path == "project-release-freeze.md"
    assert why[0] == (
        f"-- why: memory/project-release-freeze.md: selected and surfaced: score {best.score:.2f} "
        f"≥ threshold {selection.threshold:.2f}, rank 1"
    )
    other = next(i for i, line in enumerate(why) if "project-api-versioning.md" in line)
    assert why[other].startswith("-- why: memory/project-api-versioning.md: not selected")
    assert any(line.startswith("--   lacks: ") and "trunk" in line for line in why[other:])
    assert any(line.startswith("--   suggestion: add ") for line in why[other:])
    assert why[-1].startswith("-- why: memory/MEMORY.md: not a candidate: MEMORY.md is the index")


def test_explain_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = recall(capsys, "--json", "--explain", "project-api-versioning.md")
    data = json.loads(out)
    (item,) = data["explanations"]
    assert item["path"] == "project-api-versioning.md"
    assert item["verdict"] == "not-selected"
    assert set(item) == {
        "path",
        "verdict",
        "reason",
        "lexical",
        "has_description",
        "suggestion",
        "suggestion_selects",
        "lines",
    }
    assert item["lexical"]["exact"] is True
    assert item["lexical"]["threshold"] == data_threshold()
    assert "trunk" in item["lexical"]["missing"]
    assert item["suggestion_selects"] is True


def data_threshold() -> float:
    selection = select_lexical(
        FREEZE_QUERY, with_bodies(scan(EXAMPLES).candidates), (), C.SELECT_MAX_FILES
    )
    return selection.threshold


def test_explain_a_path_from_the_working_directory(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    out, _ = recall(capsys, "--json", "--explain", "memory/project-release-freeze.md")
    (item,) = json.loads(out)["explanations"]
    assert item["verdict"] == "surfaced"


def test_without_explain_json_has_none(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = recall(capsys, "--json")
    assert json.loads(out)["explanations"] == []
    assert "-- why:" not in err


def test_explain_a_seen_file_with_a_session(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = str(tmp_path / "session.json")
    recall(capsys, "--session", session)
    _, err = recall(capsys, "--session", session, "--explain", "project-release-freeze.md")
    assert (
        "-- why: memory/project-release-freeze.md: not surfaced again: "
        "already surfaced in this session"
    ) in err.splitlines()
