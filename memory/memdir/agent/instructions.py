"""How the agent reads a memory directory: loaded as Claude Code's auto memory, or read with its
tools because the project's instructions say so.

Auto memory is the directory the agent's settings and environment point at for a project
(:func:`memdir.agent.paths.locate_memory_dir`): its index is injected up to a cap, its topics'
heads by the prefetch, their frontmatter shown to the selector. Many repositories also commit a
memory directory of their own (``.claude/memory/``, ``memory/``) and tell the agent in
``CLAUDE.md`` to read it ("read `.claude/memory/` before starting work"). Nothing points auto
memory there: the agent opens those files with its tools, whole, when told, so the load caps
and the manifest's fields do not apply to them. :func:`read_by_instructions` tells the two
apart; the lint engine then leaves out the rules that model auto memory's loading
(:attr:`memdir.lint.rules.base.Rule.auto_memory_only`), and every face says so once
(:func:`notice`).

The project's instruction files are read boundedly through :mod:`memdir.textio` (regular files
only, never through a link leading out of the project); nothing is run.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memdir.agent.formats import FORCE_FLAG, FORCE_SETTING
from memdir.agent.paths import git_work_tree, is_agent_memory_dir, locate_memory_dir
from memdir.containment import relative_inside

#: The instruction files the agent loads for a project, relative to its root (the rules folder
#: is walked): the spec's instruction memory.
INSTRUCTION_FILES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
RULES_FOLDER = ".claude/rules"
#: The files whose naming a memory dir makes it read by instructions: those, and ``AGENTS.md``,
#: which ``CLAUDE.md`` often imports (``@AGENTS.md``) and where repositories shared by several
#: agents give the instruction to read their memory.
NAMING_FILES = (*INSTRUCTION_FILES, "AGENTS.md")
#: Rule files read at most: real projects keep a handful.
MAX_RULE_FILES = 100
#: Bytes read of one instruction file.
MAX_INSTRUCTION_BYTES = 512 * 1024

#: Characters a path is made of: a name found right after or before one of them is part of a
#: longer path (``docs/memory``, ``memory.md``), not the one looked for. ASCII only, so a path
#: written inside Chinese or Japanese prose with no space around it is still found.
_PATH_CHARS = r"A-Za-z0-9_\-/~$."


def instruction_paths(root: Path, names: tuple[str, ...] = INSTRUCTION_FILES) -> list[str]:
    """The instruction files among ``names`` the project at ``root`` has, then its rule files
    (``/``-separated, sorted; the rules folder is not followed through a link)."""
    found = [rel for rel in names if os.path.isfile(root / rel)]
    rules: list[str] = []
    top = root / RULES_FOLDER
    if os.path.isdir(top) and not os.path.islink(top):
        for directory, subdirs, files in os.walk(top, followlinks=False):
            subdirs.sort()
            for name in sorted(files):
                if name.endswith(".md") and len(rules) < MAX_RULE_FILES:
                    rel = os.path.relpath(os.path.join(directory, name), root)
                    rules.append(rel.replace(os.sep, "/"))
    return found + rules


def read_instruction(root: Path, rel: str) -> str | None:
    """The text of the instruction file ``rel`` of the project at ``root`` (its first
    :data:`MAX_INSTRUCTION_BYTES`), or None: unreadable, not a regular file, or a symlink
    leading out of the project."""
    from memdir.textio import read_bytes

    if relative_inside(root, rel, follow_links=True) is None:
        return None
    try:
        data = read_bytes(root / rel, MAX_INSTRUCTION_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


@dataclass(frozen=True)
class ReadByInstructions:
    """A memory dir the project's instructions name, which is not the agent's auto memory."""

    project_root: Path
    #: The dir relative to the project root (``.claude/memory``).
    rel: str
    #: The instruction file that names it (``CLAUDE.md``, ``.claude/rules/memory.md``).
    named_by: str


def notice(reading: ReadByInstructions) -> str:
    """The one sentence every face that lints says of such a directory, once."""
    from memdir.config import CONFIG_FILENAME

    return (
        f"read by the project's instructions ({reading.named_by} names {reading.rel}/), not "
        "loaded as Claude Code's auto memory on this machine: load caps and manifest rules not "
        f"run (auto memory only); pass {FORCE_FLAG} or set `{FORCE_SETTING} = true` in "
        f"{CONFIG_FILENAME} to check it as auto memory"
    )


@functools.lru_cache(maxsize=64)
def _pattern(rel: str) -> re.Pattern[str]:
    edge = f"[{_PATH_CHARS}]"
    named = rf"(?<!{edge})(?:\./)?{re.escape(rel)}"
    if "/" in rel:
        # ``.claude/memory``, ``.claude/memory/``, ``.claude/memory/MEMORY.md``; not
        # ``.claude/memory.md`` nor ``.claude/memory-old``.
        return re.compile(named + r"(?=/|(?!\.?[A-Za-z0-9_\-]))")
    # One name (``memory``) is a word of prose too: only as a path, with a slash after it
    # (``memory/``, ``memory/MEMORY.md``) or ``./`` before it.
    return re.compile(rf"(?<!{edge})(?:\./{re.escape(rel)}(?![A-Za-z0-9_\-.])|{re.escape(rel)}/)")


@functools.lru_cache(maxsize=64)
def _absolute_pattern(root_name: str, rel: str) -> re.Pattern[str]:
    # ``/home/me/<root name>/memory/``, ``~/code/<root name>/.claude/memory``,
    # ``C:\\work\\<root name>\\memory``: the project's folder, then the dir, after a separator.
    sep = r"[/\\]"
    parts = sep.join(re.escape(part) for part in (root_name, *rel.split("/")))
    return re.compile(rf"{sep}{parts}(?={sep}|(?!\.?[A-Za-z0-9_\-]))")


def names_dir(text: str, rel: str, root_name: str = "") -> bool:
    """Whether ``text`` names the path ``rel`` (relative to the project root) as a path: from
    the root, or as an absolute path through the project's folder ``root_name`` (an instruction
    written on the author's machine names the dir where the clone is checked out there)."""
    if _pattern(rel).search(text) is not None:
        return True
    return bool(root_name) and _absolute_pattern(root_name, rel).search(text) is not None


@functools.lru_cache(maxsize=16)
def _naming_file(root: Path, rel: str, stamps: tuple[tuple[str, int, int], ...]) -> str | None:
    for name, _, _ in stamps:
        text = read_instruction(root, name)
        if text is not None and names_dir(text, rel, root.name):
            return name
    return None


def stamp(root: Path, rel: str) -> tuple[str, int, int]:
    """What says a file of the project changed: (path, mtime, size); zeros when it is gone."""
    try:
        stat = os.stat(root / rel)
    except OSError:
        return (rel, 0, 0)
    return (rel, stat.st_mtime_ns, stat.st_size)


def naming_file(root: Path, rel: str) -> str | None:
    """The first instruction file of the project at ``root`` (:data:`NAMING_FILES`, then its
    rules) that names ``rel``; read again when one of them changes."""
    paths = instruction_paths(root, NAMING_FILES)
    return _naming_file(root, rel, tuple(stamp(root, name) for name in paths))


def read_by_instructions(
    memory_dir: Path,
    project_root: Path | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> ReadByInstructions | None:
    """How the agent reads ``memory_dir``: :class:`ReadByInstructions` when it lies inside a
    project (``project_root`` when given and holding it, else the git work tree above it), one
    of the project's instruction files names its path from the project root, and it is not the
    agent's auto memory for that project here (its settings and environment: ``env``, ``home``;
    compared by real path, so a symlink or a setting pointing at the folder makes it auto
    memory). None: auto memory, as memdir models it everywhere else."""
    real = Path(os.path.realpath(memory_dir))
    root: Path | None = None
    if project_root is not None and relative_inside(project_root, real) is not None:
        root = Path(os.path.realpath(project_root))
    if root is None:
        root = git_work_tree(real)
    if root is None:
        return None
    rel = relative_inside(root, real)
    if not rel:  # outside, or the project's root itself
        return None
    named_by = naming_file(root, rel)
    if named_by is None or is_agent_memory_dir(real, env, home):
        return None
    located = locate_memory_dir(root, env, home).memory_dir
    if located is not None and os.path.realpath(located) == os.fspath(real):
        return None
    return ReadByInstructions(root, rel, named_by)
