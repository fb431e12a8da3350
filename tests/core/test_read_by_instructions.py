"""A memory dir the project's instructions name, read by the agent with its tools (issue 28).

The projects are synthetic: a ``.git`` folder, a ``CLAUDE.md`` (or ``AGENTS.md``, a rule file)
and a memory dir inside. The agent's config dir and home are in tmp, so the auto memory dir the
classification compares with is never the developer's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from memdir.agent.instructions import names_dir, notice, read_by_instructions
from memdir.agent.paths import locate_memory_dir
from memdir.config import Settings
from memdir.lint.engine import LintContext
from memdir.lint.rules import RULES
from memdir.lint.state import lint_directory
from memhelpers import write_files

AWS = "AKIAQ4ZRT7XW2PLM9KDB"
LONG_BODY = "\n".join(f"- step {n}: check the staging deploy log for errors" for n in range(260))


def project(tmp_path: Path, files: dict[str, str], git: bool = True) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    if git:
        (root / ".git").mkdir()
        (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    write_files(root, files)
    return root


MEMORY = {
    ".claude/memory/MEMORY.md": "- [Deploys](deploys.md) — how staging deploys are checked\n",
    ".claude/memory/deploys.md": "---\nname: deploys\ndescription: How staging deploys are "
    "checked before a release\ntype: project\n---\n" + LONG_BODY + "\n",
}


def env_home(tmp_path: Path) -> tuple[dict[str, str], Path]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {}, home


@pytest.mark.parametrize(
    ("instructions", "named_by"),
    [
        ({"CLAUDE.md": "Read `.claude/memory/` before starting work.\n"}, "CLAUDE.md"),
        ({"CLAUDE.md": "开始前先读取.claude/memory/MEMORY.md。\n"}, "CLAUDE.md"),
        ({".claude/CLAUDE.md": "Memory: ./.claude/memory\n"}, ".claude/CLAUDE.md"),
        ({"AGENTS.md": "Keep notes in .claude/memory.\n"}, "AGENTS.md"),
        ({".claude/rules/memory.md": "See @.claude/memory/MEMORY.md\n"}, ".claude/rules/memory.md"),
        # Absolute paths on the author's machine, through the project's folder (``proj``).
        (
            {
                "CLAUDE.md": "Back up: rsync -a ~/.claude/projects/*/memory/ "
                "/home/me/proj/.claude/memory/\n"
            },
            "CLAUDE.md",
        ),
        ({"CLAUDE.md": "Notes: C:\\Users\\me\\proj\\.claude\\memory\n"}, "CLAUDE.md"),
    ],
)
def test_a_dir_the_instructions_name_is_read_by_them(
    tmp_path: Path, instructions: dict[str, str], named_by: str
) -> None:
    root = project(tmp_path, {**MEMORY, **instructions})
    env, home = env_home(tmp_path)
    reading = read_by_instructions(root / ".claude" / "memory", env=env, home=home)
    assert reading is not None
    assert (reading.project_root, reading.rel, reading.named_by) == (
        root.resolve(),
        ".claude/memory",
        named_by,
    )
    assert f"{named_by} names .claude/memory/" in notice(reading)
    assert "--any-format" in notice(reading)


@pytest.mark.parametrize(
    "text",
    [
        "Claude Code keeps its auto memory in ~/.claude/memory.\n",  # another path
        "Notes go to .claude/memory-old/ and .claude/memory.md.\n",  # longer names
        "Use the auto memory tool; memory is cheap.\n",  # prose
        "Old notes: /home/me/other/.claude/memory/\n",  # another project's folder
        "Old notes: /home/me/proj/.claude/memory-old/\n",  # a longer name in this one
        "Mirror: ~/.claude/projects/-home-me-proj/memory/\n",  # the agent's own copy
    ],
)
def test_a_dir_the_instructions_do_not_name_is_auto_memory(tmp_path: Path, text: str) -> None:
    root = project(tmp_path, {**MEMORY, "CLAUDE.md": text})
    env, home = env_home(tmp_path)
    assert read_by_instructions(root / ".claude" / "memory", env=env, home=home) is None


def test_one_name_is_a_path_only_with_a_slash() -> None:
    assert names_dir("Read memory/MEMORY.md first.", "memory")
    assert names_dir("Read ./memory before work.", "memory")
    assert not names_dir("Update memory after each task.", "memory")
    assert not names_dir("See docs/memory/ for notes.", "memory")
    assert names_dir("See docs/memory/ for notes.", "docs/memory")
    assert names_dir("Copied to /srv/app/memory/ nightly.", "memory", "app")
    assert not names_dir("Copied to /srv/app/memory/ nightly.", "memory", "web")
    assert not names_dir("Copied to /srv/app/memory/ nightly.", "memory")


def test_outside_any_project_it_stays_auto_memory(tmp_path: Path) -> None:
    root = project(tmp_path, {**MEMORY, "CLAUDE.md": "Read .claude/memory/ first.\n"}, git=False)
    env, home = env_home(tmp_path)
    assert read_by_instructions(root / ".claude" / "memory", env=env, home=home) is None
    # ... unless the project is given (`memdir lint --project ROOT`).
    given = read_by_instructions(root / ".claude" / "memory", root, env=env, home=home)
    assert given is not None and given.rel == ".claude/memory"


def test_the_agents_symlinked_memory_dir_is_auto_memory(tmp_path: Path) -> None:
    root = project(tmp_path, {**MEMORY, "CLAUDE.md": "Read .claude/memory/ first.\n"})
    env, home = env_home(tmp_path)
    located = locate_memory_dir(root, env, home).memory_dir
    assert located is not None
    located.parent.mkdir(parents=True)
    os.symlink(root / ".claude" / "memory", located)
    assert read_by_instructions(root / ".claude" / "memory", env=env, home=home) is None
    # The agent's own spelling of it too.
    assert read_by_instructions(located, env=env, home=home) is None


def test_a_user_setting_pointing_there_makes_it_auto_memory(tmp_path: Path) -> None:
    root = project(tmp_path, {**MEMORY, "CLAUDE.md": "Read .claude/memory/ first.\n"})
    env, home = env_home(tmp_path)
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        json.dumps({"autoMemoryDirectory": str(root / ".claude" / "memory")}), encoding="utf-8"
    )
    assert read_by_instructions(root / ".claude" / "memory", env=env, home=home) is None


def test_a_link_leading_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("Read .claude/memory/ first.\n", encoding="utf-8")
    root = project(tmp_path, MEMORY)
    os.symlink(outside, root / "CLAUDE.md")
    env, home = env_home(tmp_path)
    assert read_by_instructions(root / ".claude" / "memory", env=env, home=home) is None


# --- the engine ------------------------------------------------------------------------------


AUTO_MEMORY_ONLY = {
    "MEM001",
    "MEM002",
    "MEM003",
    "MEM004",
    "MEM007",
    "MEM101",
    "MEM103",
    "MEM104",
    "MEM105",
    "MEM106",
    "MEM107",
    "MEM108",
    "MEM109",
    "MEM115",
    "MEM116",
    "MEM131",
}


def test_the_registry_flags_the_rules_of_auto_memorys_loading() -> None:
    assert {code for code, rule in RULES.items() if rule.auto_memory_only} == AUTO_MEMORY_ONLY


def test_the_engine_leaves_out_exactly_the_flagged_rules(tmp_path: Path) -> None:
    root = project(tmp_path, {**MEMORY, "CLAUDE.md": "Read .claude/memory/ first.\n"})
    env, home = env_home(tmp_path)
    reading = read_by_instructions(root / ".claude" / "memory", env=env, home=home)
    settings = Settings(preview=True)
    every = LintContext.from_settings(root, settings).enabled
    read = LintContext.from_settings(root, settings, reading).enabled
    assert every - read == AUTO_MEMORY_ONLY


@pytest.fixture
def dir_read_by_instructions(tmp_path: Path, agent_config: Path) -> Path:
    root = project(
        tmp_path,
        {
            **MEMORY,
            "CLAUDE.md": "Before work, read `.claude/memory/MEMORY.md`.\n",
            ".claude/memory/MEMORY.md": "- [Deploys](deploys.md) — how staging deploys are "
            "checked\n- [Keys](keys.md) — the staging keys\n"
            "- [Agents](.claude/agents-memory/review.md) — the reviewer's notes\n"
            "- [Gone](gone.md) — a note deleted since\n",
            ".claude/memory/keys.md": f"Staging key: {AWS}\n",
            ".claude/agents-memory/review.md": "# Reviewer\n",
        },
    )
    return root / ".claude" / "memory"


def test_lint_skips_the_load_rules_and_keeps_the_rest(dir_read_by_instructions: Path) -> None:
    found = {d.code for d in lint_directory(dir_read_by_instructions).diagnostics}
    # MEM106 (long body) and MEM101 (no frontmatter) model auto memory's loading: left out.
    assert found & AUTO_MEMORY_ONLY == set()
    # A secret is a secret however the file is read; a link to nothing is still dangling.
    assert {"MEM110", "MEM005"} <= found


def test_a_link_from_the_project_root_is_not_dangling(dir_read_by_instructions: Path) -> None:
    dangling = [
        d for d in lint_directory(dir_read_by_instructions).diagnostics if d.code == "MEM005"
    ]
    assert ["gone.md" in d.message for d in dangling] == [True]


def test_any_format_checks_it_as_auto_memory(dir_read_by_instructions: Path) -> None:
    found = lint_directory(dir_read_by_instructions, Settings(any_format=True)).diagnostics
    assert {"MEM101", "MEM106", "MEM110"} <= {d.code for d in found}
    # As auto memory, a link is read from the memory dir only.
    assert sum(1 for d in found if d.code == "MEM005") == 2
