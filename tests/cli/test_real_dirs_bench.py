"""``benchmarks/real_dirs.py``: each rule's precision on a folder of memory dirs, against verdicts
kept beside them (issue 28's measure), run as people run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memhelpers import ROOT, topic

SCRIPT = ROOT / "benchmarks" / "real_dirs.py"


def _sample(tmp_path: Path) -> Path:
    sample = tmp_path / "sample"
    one = sample / "dev" / "one"
    one.mkdir(parents=True)
    # Two relative dates on one line (MEM119 twice, a preview rule), and an orphan (MEM107).
    (one / "MEMORY.md").write_text("- [Notes](n.md) — release notes\n", encoding="utf-8")
    body = "We shipped it yesterday and the review is tomorrow.\n"
    (one / "n.md").write_text(
        topic("n", "release notes for the payments service rollout", body=body), encoding="utf-8"
    )
    (one / "orphan.md").write_text(topic("orphan", "a memory no entry links"), encoding="utf-8")
    manifest = [{"local": "dev/one", "set": "dev", "format": "claude-code", "language": "en"}]
    (sample / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return sample


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, SCRIPT, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_scores_each_rule_against_the_verdicts_and_lists_the_rest(tmp_path: Path) -> None:
    sample = _sample(tmp_path)
    todo = tmp_path / "todo.jsonl"
    _run(sample, "--set", "dev", "--preview", "--todo", todo)
    rows = [json.loads(line) for line in todo.read_text(encoding="utf-8").splitlines()]
    keys = sorted(row["key"] for row in rows)
    # The second finding of a code on one line keeps its own key (its column appended).
    assert keys == [
        "dev/one|n.md|MEM119|6",
        "dev/one|n.md|MEM119|6|c43",
        "dev/one|orphan.md|MEM107|1",
    ]
    assert all(row["format"] == "claude-code" and row["text"] for row in rows)
    verdicts = [
        {"key": keys[0], "verdict": "right"},
        {"key": keys[1], "verdict": "wrong"},
        {"key": keys[2], "verdict": "right"},
    ]
    (sample / "verdicts.jsonl").write_text(
        "".join(json.dumps(v) + "\n" for v in verdicts), encoding="utf-8"
    )
    table = json.loads(_run(sample, "--preview", "--json").stdout)
    assert table["dirs"] == 1
    assert table["rules"]["MEM119"] == {
        "findings": 2,
        "right": 1,
        "wrong": 1,
        "unjudged": 0,
        "precision": 0.5,
    }
    assert table["rules"]["MEM107"]["precision"] == 1.0
    assert "MEM107          1      1      0        0    100.0%" in _run(sample).stdout
    assert "MEM119" not in _run(sample).stdout  # off by default


def test_markdown_prints_the_docs_table_over_sets(tmp_path: Path) -> None:
    sample = _sample(tmp_path)
    verdict = {"key": "dev/one|orphan.md|MEM107|1", "verdict": "right", "note": "an orphan"}
    (sample / "verdicts.jsonl").write_text(json.dumps(verdict) + "\n", encoding="utf-8")
    lines = _run(sample, "--preview", "--markdown", "dev").stdout.splitlines()
    assert lines[0] == "| code | default | dev (1) | all judged |"
    rows = {line.split(" | ")[0]: line for line in lines[2:]}
    assert rows["| [MEM107](rules/MEM107.md)"].endswith("| on | 1/1 | 1/1 (100.0%) |")
    assert rows["| [MEM119](rules/MEM119.md)"].endswith("| preview | 2 (none judged) | – |")


def test_a_project_kept_under_its_repository_name_is_linted_as_its_clone(tmp_path: Path) -> None:
    # The repository's copy under its name, as `git clone` names the folder: an instruction
    # written on the author's machine names the memory dir by an absolute path through it.
    sample = _sample(tmp_path)
    manifest = json.loads((sample / "manifest.json").read_text(encoding="utf-8"))
    manifest[0].update(repo="someone/notes-app", dir="memory")
    (sample / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    clone = sample / "projects" / "dev" / "one" / "notes-app"
    (clone / ".git").mkdir(parents=True)
    (clone / "CLAUDE.md").write_text(
        "Nightly: rsync -a ~/.claude/projects/*/memory/ /home/me/notes-app/memory/\n",
        encoding="utf-8",
    )
    (clone / "memory").mkdir()
    for path in (sample / "dev" / "one").iterdir():
        (clone / "memory" / path.name).write_bytes(path.read_bytes())
    table = json.loads(_run(sample, "--project", "--preview", "--json").stdout)
    assert table["read_by_instructions"] == ["dev/one"]
    assert "MEM107" not in table["rules"]  # an orphan is auto memory's concern
    assert table["rules"]["MEM119"]["findings"] == 2


def test_a_folder_named_like_the_dir_keeps_its_own_keys(tmp_path: Path) -> None:
    # `memory/memory/bare.md` (an old copy nested in the dir) is not `memory/bare.md`.
    sample = _sample(tmp_path)
    one = sample / "dev" / "one"
    one.rename(sample / "dev" / "memory")
    manifest = [{"local": "dev/memory", "set": "dev", "format": "claude-code", "language": "en"}]
    (sample / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    nested = sample / "dev" / "memory" / "memory"
    nested.mkdir()
    for folder in (nested.parent, nested):
        (folder / "bare.md").write_text("# Notes with no frontmatter\n", encoding="utf-8")
    todo = tmp_path / "todo.jsonl"
    _run(sample, "--todo", todo)
    keys = sorted(json.loads(line)["key"] for line in todo.read_text(encoding="utf-8").splitlines())
    assert [key for key in keys if "MEM101" in key] == [
        "dev/memory|bare.md|MEM101|1",
        "dev/memory|memory/bare.md|MEM101|1",
    ]
