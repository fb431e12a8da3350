"""``memdir hook post-tool-use`` in the real Claude Code CLI's settings, run offline.

MEMORY.md holds memdir's line for a memory (as after a create through memdir's MCP tool); the
model, as Claude Code's prompt tells it, reads MEMORY.md and adds its own line with the Edit tool.
Claude Code runs the PostToolUse hook, memdir drops its own line, and the model's next request
says so. Skipped when the pinned release is not installed (scripts/install-claude-code.sh).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fake_anthropic import Body, message, text, tool_result_blocks
from fidelity.agent import run_agent
from memdir.agent.paths import locate_memory_dir

DEADLINE = (
    "---\nname: launch-deadline\ndescription: the launch is due on March 3\ntype: project\n---\n"
    "The launch is due on March 3.\n"
)
MEMDIRS_LINE = "- [Launch deadline](launch-deadline.md) — the launch is due on March 3"
AGENTS_LINE = "- [Launch](launch-deadline.md) — ship date agreed with sales"


def all_text(body: Body) -> str:
    return json.dumps(body.get("messages", []), ensure_ascii=False)


def test_the_agents_own_index_line_replaces_memdirs(claude_code: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)
    memory = locate_memory_dir(project, env={}, home=home).memory_dir
    assert memory is not None
    memory.mkdir(parents=True)
    (memory / "launch-deadline.md").write_text(DEADLINE, encoding="utf-8")
    index = memory / "MEMORY.md"
    index.write_text(MEMDIRS_LINE + "\n", encoding="utf-8")
    # As docs/hook.md says to configure it (this interpreter has memdir installed).
    command = f"{sys.executable} -m memdir hook post-tool-use"
    hook = {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": command}]}
    settings = {"hooks": {"PostToolUse": [hook]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")

    def respond(body: Body) -> Body:
        if not body.get("tools"):
            return message(text("ok"))  # side requests
        done = len(tool_result_blocks(body))
        if done == 0:
            read = {"file_path": str(index)}
            return message({"type": "tool_use", "id": "toolu_r", "name": "Read", "input": read})
        if done == 1:
            edit = {
                "file_path": str(index),
                "old_string": "March 3\n",
                "new_string": f"March 3\n{AGENTS_LINE}\n",
            }
            return message({"type": "tool_use", "id": "toolu_e", "name": "Edit", "input": edit})
        return message(text("Done."))

    run = run_agent(
        claude_code,
        home=home,
        cwd=project,
        prompt="remember that the launch date was agreed with sales",
        responder=respond,
        args=["--permission-mode", "acceptEdits"],
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert index.read_text(encoding="utf-8") == AGENTS_LINE + "\n"
    last = run.requests[-1]
    assert "PostToolUse:Edit hook additional context: memdir: dropped memdir's own MEMORY.md " in (
        all_text(last)
    )
