"""``memdir hook post-tool-use``: after Claude Code's own Edit or Write of the project's
MEMORY.md, memdir's line for a file the agent just indexed gives way to the agent's.

The input is the one Claude Code 2.1.328 sends (recorded with the real CLI: the test in
tests/agents/test_hook_index_claude.py runs it end to end)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memdir.agent.paths import locate_memory_dir
from memdir.faces.hook_index import post_tool_use

DEADLINE = (
    "---\nname: launch-deadline\ndescription: the launch is due on March 3\ntype: project\n---\n"
    "The launch is due on March 3.\n"
)
MEMDIRS_LINE = "- [Launch deadline](launch-deadline.md) — the launch is due on March 3"
AGENTS_LINE = "- [Launch](launch-deadline.md) — ship date agreed with sales"


def scratch(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(home, project, memory dir), MEMORY.md as the agent's Edit left it: memdir's line, then
    the agent's."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    memory = locate_memory_dir(project, env={}, home=home).memory_dir
    assert memory is not None
    memory.mkdir(parents=True)
    (memory / "launch-deadline.md").write_text(DEADLINE, encoding="utf-8")
    (memory / "MEMORY.md").write_text(f"{MEMDIRS_LINE}\n{AGENTS_LINE}\n", encoding="utf-8")
    return home, project, memory


def edit_input(project: Path, file_path: Path, tool: str = "Edit") -> str:
    """A PostToolUse input as Claude Code sends it (the fields memdir reads, and some it does
    not)."""
    return json.dumps(
        {
            "session_id": "882d39be-9fad-4632-85e3-714d09677a79",
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "permission_mode": "acceptEdits",
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": {
                "file_path": str(file_path),
                "old_string": "March 3\n",
                "new_string": f"March 3\n{AGENTS_LINE}\n",
                "replace_all": False,
            },
            "tool_response": {"filePath": str(file_path), "userModified": False},
            "tool_use_id": "toolu_e",
        }
    )


def test_the_agents_edit_of_memory_md_drops_memdirs_line(tmp_path: Path) -> None:
    home, project, memory = scratch(tmp_path)
    outcome = post_tool_use(edit_input(project, memory / "MEMORY.md"), env={}, home=home)
    assert (memory / "MEMORY.md").read_text(encoding="utf-8") == f"{AGENTS_LINE}\n"
    assert outcome.output == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "memdir: dropped memdir's own MEMORY.md line for "
            "launch-deadline.md (line 1 links it now).",
        }
    }
    assert outcome.log == "dropped memdir's line for launch-deadline.md"
    # Run again: nothing left to do, nothing printed.
    again = post_tool_use(edit_input(project, memory / "MEMORY.md"), env={}, home=home)
    assert again.output is None and again.stdout() == ""


def test_a_write_tool_counts_too(tmp_path: Path) -> None:
    home, project, memory = scratch(tmp_path)
    outcome = post_tool_use(edit_input(project, memory / "MEMORY.md", "Write"), env={}, home=home)
    assert outcome.output is not None
    assert (memory / "MEMORY.md").read_text(encoding="utf-8") == f"{AGENTS_LINE}\n"


def test_other_files_and_other_indexes_are_left_alone(tmp_path: Path) -> None:
    home, project, memory = scratch(tmp_path)
    before = (memory / "MEMORY.md").read_text(encoding="utf-8")
    # Another file of the memory dir, a MEMORY.md elsewhere, a tool that writes nothing.
    other = project / "MEMORY.md"
    other.write_text(f"{MEMDIRS_LINE}\n{AGENTS_LINE}\n", encoding="utf-8")
    for raw in (
        edit_input(project, memory / "launch-deadline.md"),
        edit_input(project, other),
        edit_input(project, memory / "MEMORY.md", "Read"),
    ):
        assert post_tool_use(raw, env={}, home=home).output is None
    assert (memory / "MEMORY.md").read_text(encoding="utf-8") == before
    assert other.read_text(encoding="utf-8") == before


def test_bad_input_prints_nothing(tmp_path: Path) -> None:
    for raw in ("", "[]", "{", json.dumps({"hook_event_name": "UserPromptSubmit"})):
        outcome = post_tool_use(raw, env={}, home=tmp_path)
        assert outcome.output is None and outcome.log


def test_the_command_as_the_agent_runs_it(tmp_path: Path) -> None:
    home, project, memory = scratch(tmp_path)
    env = {k: v for k, v in os.environ.items() if k in {"PATH", "PYTHONPATH", "LANG"}}
    env["HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "hook", "post-tool-use"],
        input=edit_input(project, memory / "MEMORY.md").encode(),
        capture_output=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    output = json.loads(proc.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "launch-deadline.md" in output["hookSpecificOutput"]["additionalContext"]
    assert (memory / "MEMORY.md").read_text(encoding="utf-8") == f"{AGENTS_LINE}\n"
    # Not JSON: exit 0, nothing printed (fails open).
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", "hook", "post-tool-use"],
        input=b"not json",
        capture_output=True,
        env=env,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, b"")
