"""The background extraction agent: turns a finished conversation into memories (spec section 8).

After a turn, when the recent messages show no memory write, Claude Code forks an agent that
reads the conversation and saves what is worth keeping. :func:`run_extraction` does the same for
any transcript, with the real ``anthropic`` SDK (``AsyncAnthropic``, imported only when a run
starts):

* **Skip** when the last turn(s) already wrote memory (Write/Edit/MultiEdit into the memory dir,
  or a mutating memory-tool call): the main agent has done it, and a second writer would
  duplicate it. No API call is made.
* **One at a time** per memory dir: a non-blocking lock (``extract.lock`` in the dir's state
  folder, :func:`memdir.writing.writer.dir_state`, outside the memory dir; held across processes) is
  taken for the whole run; a second extraction reports ``busy``.
* **Tools**: the API memory tool over the memory dir
  (:class:`memdir.writing.memory_tool.MemdirMemoryTool`, so every write is confined, atomic, locked
  and keeps MEMORY.md in step; only ``*.md`` files) and read-only ``read``, ``grep`` and ``glob``
  confined to the project root, each with output caps. Nothing else: no shell, no MCP, no
  sub-agents. As in Claude Code, the prompt keeps the agent to the conversation: the project tools
  are there, but not for checking what was said.
* **At most 5 turns** (:data:`memdir.constants.EXTRACTION_MAX_TURNS`): the tools of the last turn
  run, then the loop stops without another model call, as the agent's turn limit does.
* **Prompt**: the system prompt carries the four-type taxonomy, the "do not save" list, the rule
  to read existing memories before writing (and to delete wrong ones), the frontmatter layout
  Claude Code writes (``metadata:`` / ``  type:``), and the current manifest; the user message
  carries the rendered conversation.
* **Dry run** works on a copy of the memory dir, so the model sees its own writes while the real
  dir is never touched; the result shows the writes it would make, with diffs. The copy holds
  whatever files the dir holds (secrets included; a FIFO or a device is never opened): it is
  private (folders 0700, files 0600, in a 0700 temporary folder), removed when the run ends
  however it ends, and a copy left by a killed run is removed by the next dry run.
* **Errors** from the API (429, 5xx, connection) end the run with ``status="error"`` and the
  message recorded, never a traceback; writes made before the error are listed. An endpoint
  may echo the request's key, and the model may quote one it read: every text of the result
  (tool-call inputs and diffs included), progress and logs passes
  :func:`memdir.secrets.redact` (the credentials in use, and anything that looks like one).

The language server calls :func:`run_extraction` directly (it is async and reports progress
through a callback); the CLI uses :func:`extract`.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import importlib
import inspect
import io
import json
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from memdir import constants as C
from memdir.agent.manifest import format_manifest
from memdir.agent.paths import relative_inside
from memdir.agent.scan import scan
from memdir.config import Settings, load_settings
from memdir.extract.transcript import (
    MemoryWrite,
    Transcript,
    read_transcript,
    recent_memory_writes,
    render_conversation,
)
from memdir.extras import MissingExtraError, require
from memdir.recall.select import NO_CREDENTIALS, credential_values
from memdir.search.grep import (
    InvalidPatternError,
    SlowPatternError,
    compile_glob,
    compile_pattern,
    glob_matcher,
    search_texts,
)
from memdir.secrets import redact
from memdir.textio import NotRegularFileError, open_regular, read_bytes
from memdir.writing.writer import (
    LEGACY_FILENAMES,
    TEMP_NAME,
    FileChange,
    WriteError,
    dir_state,
    discard_dir_state,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from memdir.writing.memory_tool import MemdirMemoryTool, ToolResult

log = logging.getLogger(__name__)

#: The extraction agent runs on a Sonnet-class model unless told otherwise.
DEFAULT_EXTRACTION_MODEL: Final = C.DEFAULT_SELECTOR_MODEL
EXTRACTION_MAX_TOKENS: Final = 4096
#: Held for a whole extraction, in the dir's state folder (never in the memory dir).
EXTRACT_LOCK_NAME: Final = "extract.lock"
#: The dry run's temporary folders: ``memdir-dry-run-<pid>-<random>`` in the temp dir.
DRY_RUN_PREFIX: Final = "memdir-dry-run-"
#: The copy's name inside its temporary folder.
_SANDBOX_NAME: Final = "memory"
#: Turns of the transcript checked for memory writes before deciding to extract.
RECENT_TURNS: Final = 1

#: Output caps of the read-only project tools: enough to check a fact, not to page a repo in.
READ_DEFAULT_LINES: Final = 400
READ_MAX_LINES: Final = 2000
READ_MAX_CHARS: Final = 40_000
LINE_MAX_CHARS: Final = 2000
GREP_MAX_MATCHES: Final = 100
GREP_MAX_FILES: Final = 5000
GREP_MAX_FILE_BYTES: Final = 1024 * 1024
GLOB_MAX_RESULTS: Final = 200
TOOL_OUTPUT_MAX_CHARS: Final = 20_000
#: Folders the project walks skip: version control, caches, dependencies (hidden ones too).
SKIPPED_DIRS: Final = frozenset({"node_modules", "__pycache__", "venv", "dist", "build"})

MEMORY_TYPE_GUIDE: Final = {
    "user": "the user's role, goals, preferences and knowledge level",
    "feedback": (
        "how the user wants the agent to work: their corrections and also the approaches they "
        "confirmed (saving only mistakes drifts away from what already works), each with the "
        "reason they gave"
    ),
    "project": (
        "background, goals and the reasons for decisions that the code and git history do not "
        'show; turn relative dates into absolute ones ("Thursday" becomes the date itself)'
    ),
    "reference": "entry points to external systems (a tracker project, a dashboard, a runbook)",
}
DO_NOT_SAVE: Final = (
    "code patterns, directory structure or architecture snapshots",
    "git history and recent changes",
    "debugging and fix steps",
    "anything already in CLAUDE.md (or enforced by CI)",
    "the current task's progress or temporary state",
)

Status = Literal["completed", "skipped", "busy", "error"]


# --- results and progress --------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractionProgress:
    """A progress event: ``started``, ``turn`` (before each model call), ``tool``, ``finished``."""

    stage: Literal["started", "turn", "tool", "finished"]
    message: str
    turn: int = 0
    max_turns: int = C.EXTRACTION_MAX_TURNS

    @property
    def percentage(self) -> int:
        if self.stage == "finished":
            return 100
        return min(99, round(100 * self.turn / max(1, self.max_turns)))


ProgressCallback = Callable[[ExtractionProgress], Awaitable[None] | None]


@dataclass(frozen=True)
class ToolCallRecord:
    turn: int
    name: str
    input: Mapping[str, Any]
    is_error: bool
    #: The start of the result text, for logs and the CLI.
    preview: str


@dataclass(frozen=True)
class ExtractionResult:
    """What an extraction did (or, with ``dry_run``, would do)."""

    status: Status
    memory_dir: Path
    dry_run: bool = False
    #: Why it was skipped or busy, or the error that ended it.
    reason: str | None = None
    #: How the loop ended: the model's last ``stop_reason``, or ``max_turns``.
    stop_reason: str | None = None
    turns: int = 0
    model: str | None = None
    changes: tuple[FileChange, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    #: The memory writes found in the recent turns (why a run was skipped).
    recent_writes: tuple[MemoryWrite, ...] = ()
    #: The model's final text (its own summary of what it saved).
    summary: str = ""
    warnings: tuple[str, ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)

    def paths(self, kind: str) -> list[str]:
        return [
            c.new_path or c.path if kind == "renamed" else c.path
            for c in self.changes
            if c.kind == kind
        ]

    @property
    def created(self) -> list[str]:
        return self.paths("created")

    @property
    def changed(self) -> list[str]:
        return self.paths("changed")

    @property
    def deleted(self) -> list[str]:
        return self.paths("deleted")

    def to_json(self) -> dict[str, object]:
        return {
            "status": self.status,
            "memory_dir": str(self.memory_dir),
            "dry_run": self.dry_run,
            "reason": self.reason,
            "stop_reason": self.stop_reason,
            "turns": self.turns,
            "model": self.model,
            "created": self.created,
            "changed": self.changed,
            "deleted": self.deleted,
            "renamed": [
                {"from": c.path, "to": c.new_path} for c in self.changes if c.kind == "renamed"
            ],
            "changes": [c.to_json() for c in self.changes],
            "tool_calls": [
                {"turn": t.turn, "name": t.name, "input": dict(t.input), "is_error": t.is_error}
                for t in self.tool_calls
            ],
            "recent_writes": [
                {"line": w.line, "tool": w.tool, "path": w.path} for w in self.recent_writes
            ],
            "summary": self.summary,
            "warnings": list(self.warnings),
            "usage": dict(self.usage),
        }


def merge_changes(changes: list[FileChange]) -> tuple[FileChange, ...]:
    """Fold a run's writes into one net change per file, with unified diffs.

    A file created and then edited is "created" with its final text; created and then deleted
    is nothing at all; edited and then deleted is "deleted"; a rename carries any edits along.
    """
    state: dict[str, FileChange] = {}
    for change in changes:
        previous = state.pop(change.path, None)
        if change.kind == "created":
            if previous is not None and previous.kind == "deleted":
                state[change.path] = FileChange(
                    "changed", change.path, before=previous.before, after=change.after
                )
            else:
                state[change.path] = change
        elif change.kind == "changed":
            if previous is None:
                state[change.path] = change
            else:
                state[change.path] = replace(previous, after=change.after)
        elif change.kind == "deleted":
            if change.is_dir:
                prefix = change.path + "/"
                for key in [k for k in state if k.startswith(prefix)]:
                    if state[key].kind == "created":
                        del state[key]
            if previous is None:
                state[change.path] = change
            elif previous.kind == "renamed":
                state[previous.path] = FileChange("deleted", previous.path, before=previous.before)
            elif previous.kind != "created":
                state[change.path] = FileChange(
                    "deleted", change.path, before=previous.before, is_dir=change.is_dir
                )
        elif change.kind == "renamed" and change.new_path is not None:
            if previous is None:
                state[change.new_path] = change
            elif previous.kind == "created":
                state[change.new_path] = replace(previous, path=change.new_path)
            elif previous.kind == "renamed" and previous.path == change.new_path:
                if previous.after != previous.before:
                    state[change.new_path] = FileChange(
                        "changed", change.new_path, before=previous.before, after=previous.after
                    )
            else:
                origin = previous.path if previous.kind == "renamed" else change.path
                state[change.new_path] = FileChange(
                    "renamed",
                    origin,
                    new_path=change.new_path,
                    before=previous.before,
                    after=previous.after,
                )
    merged: list[FileChange] = []
    for key, change in state.items():
        old_name = change.path
        new_name = key
        diff = ""
        if not change.is_dir and (change.before is not None or change.after is not None):
            diff = "".join(
                difflib.unified_diff(
                    (change.before or "").splitlines(keepends=True),
                    (change.after or "").splitlines(keepends=True),
                    fromfile="/dev/null" if change.kind == "created" else f"a/{old_name}",
                    tofile="/dev/null" if change.kind == "deleted" else f"b/{new_name}",
                )
            )
        merged.append(replace(change, diff=diff))
    return tuple(merged)


# --- read-only project tools -----------------------------------------------------------------


@dataclass(frozen=True)
class ProjectToolResult:
    text: str
    is_error: bool = False


class ProjectToolError(Exception):
    """A refused or failed project tool call; the message goes back to the model."""


def _compile_glob(pattern: str) -> Callable[[str], bool]:
    try:
        return compile_glob(pattern)
    except InvalidPatternError as exc:
        raise ProjectToolError(str(exc)) from None


class ProjectTools:
    """``read``, ``grep`` and ``glob`` over one project directory, read-only and confined.

    Every path is resolved (symlinks included) and must stay inside the project root; walks
    never follow symlinked folders and skip hidden folders, dependencies and caches; every
    output is capped and says so when it was cut.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    @staticmethod
    def definitions() -> list[dict[str, Any]]:
        """The tool definitions sent to the API."""
        return [
            {
                "name": "read",
                "description": (
                    "Read a text file of the project (read-only), with line numbers. Paths are "
                    f"relative to the project root. At most {READ_MAX_LINES} lines per call."
                ),
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "file path in the project"},
                        "offset": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "first line (1-based)",
                        },
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "number of lines",
                        },
                    },
                    "required": ["path"],
                    "additionalProperties": False,
                },
            },
            {
                "name": "grep",
                "description": (
                    "Search the project's text files for a regular expression (Python syntax). "
                    f"Returns path:line: text, at most {GREP_MAX_MATCHES} matches."
                ),
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string"},
                        "path": {
                            "type": "string",
                            "description": "folder or file to search (default: the project)",
                        },
                        "glob": {
                            "type": "string",
                            "description": "only files matching this glob, e.g. *.py",
                        },
                        "ignore_case": {"type": "boolean"},
                    },
                    "required": ["pattern"],
                    "additionalProperties": False,
                },
            },
            {
                "name": "glob",
                "description": (
                    "List project files matching a glob such as **/*.md, newest first, "
                    f"at most {GLOB_MAX_RESULTS}."
                ),
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string"},
                        "path": {
                            "type": "string",
                            "description": "folder to search in (default: the project)",
                        },
                    },
                    "required": ["pattern"],
                    "additionalProperties": False,
                },
            },
        ]

    def call(self, name: str, data: Mapping[str, Any]) -> ProjectToolResult:
        """Run one tool call; refusals and failures are error results, never exceptions."""
        try:
            if name == "read":
                text = self.read(
                    _string(data, "path"),
                    _integer(data, "offset", 1),
                    _integer(data, "limit", READ_DEFAULT_LINES),
                )
            elif name == "grep":
                text = self.grep(
                    _string(data, "pattern"),
                    _string(data, "path", "."),
                    _string(data, "glob", "") or None,
                    bool(data.get("ignore_case", False)),
                )
            elif name == "glob":
                text = self.glob(_string(data, "pattern"), _string(data, "path", "."))
            else:
                raise ProjectToolError(f"unknown tool {name!r}")
        except ProjectToolError as exc:
            return ProjectToolResult(f"Error: {exc}", is_error=True)
        except OSError as exc:
            return ProjectToolResult(f"Error: {exc.strerror or exc}", is_error=True)
        if len(text) > TOOL_OUTPUT_MAX_CHARS:
            text = text[:TOOL_OUTPUT_MAX_CHARS] + "\n… [output cut]"
        return ProjectToolResult(text)

    def resolve(self, path: str) -> Path:
        """A path in the project, symlinks resolved; anything outside it is refused."""
        if "\x00" in path:
            raise ProjectToolError("the path contains a NUL byte")
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        if relative_inside(self.root, candidate) is None:
            raise ProjectToolError(
                f"{path} is outside the project {self.root}; read-only tools stay in the project "
                "(use the memory tool for /memories)"
            )
        return Path(os.path.realpath(candidate))

    def _shown(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def read(self, path: str, offset: int = 1, limit: int = READ_DEFAULT_LINES) -> str:
        target = self.resolve(path)
        if target.is_dir():
            raise ProjectToolError(f"{path} is a directory; use glob to list it")
        if not target.exists():
            raise ProjectToolError(f"{path} does not exist")
        if not self._regular(target):
            raise ProjectToolError(f"{path} is not a regular file")
        # Opened as a regular file only, non-blocking: a FIFO swapped in after the check above
        # is refused, not waited on (memdir.textio).
        try:
            fd, _ = open_regular(target)
        except OSError as exc:
            raise ProjectToolError(f"{path} cannot be read: {exc.strerror or exc}") from None
        offset = max(1, offset)
        limit = max(1, min(limit, READ_MAX_LINES))
        out: list[str] = []
        size = 0
        total = 0
        with os.fdopen(fd, "rb") as raw:
            if b"\x00" in raw.read(8192):
                raise ProjectToolError(f"{path} is a binary file")
            raw.seek(0)
            handle = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
            # Lines are read at most LINE_MAX_CHARS + 1 characters at a time: a file of one
            # endless line never sits in memory whole.
            while line := handle.readline(LINE_MAX_CHARS + 1):
                rest = line
                while not rest.endswith("\n") and (rest := handle.readline(LINE_MAX_CHARS)):
                    pass  # the rest of a cut line: counted as part of it, not kept
                total += 1
                if total < offset or len(out) >= limit or size > READ_MAX_CHARS:
                    continue
                line = line.rstrip("\n")
                if len(line) > LINE_MAX_CHARS:
                    line = line[:LINE_MAX_CHARS] + " … [line cut]"
                rendered = f"{total:>6}\t{line}"
                out.append(rendered)
                size += len(rendered) + 1
        if not out:
            return f"{self._shown(target)} has {total} lines; nothing at line {offset}"
        last = offset + len(out) - 1
        note = f"\n… [lines {last + 1}-{total} not shown; use offset]" if last < total else ""
        return "\n".join(out) + note

    def _regular(self, path: Path) -> bool:
        """A regular file inside the project (a FIFO or device would block or never end)."""
        try:
            if not stat.S_ISREG(path.stat().st_mode):
                return False
        except OSError:
            return False
        return not path.is_symlink() or relative_inside(self.root, path) is not None

    def _walk(self, base: Path) -> Iterator[Path]:
        if not base.is_dir():
            if self._regular(base):
                yield base
            return
        # os.walk never descends into symlinked folders, so the walk cannot leave the project.
        for directory, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
            for name in sorted(files):
                path = Path(directory) / name
                if self._regular(path):
                    yield path

    def grep(
        self, pattern: str, path: str = ".", glob: str | None = None, ignore_case: bool = False
    ) -> str:
        try:
            regex = compile_pattern(pattern, ignore_case=ignore_case)
        except InvalidPatternError as exc:
            raise ProjectToolError(f"invalid regular expression: {exc}") from None
        try:
            wanted = glob_matcher(glob) if glob else None
        except InvalidPatternError as exc:
            raise ProjectToolError(str(exc)) from None
        base = self.resolve(path)
        stopped: list[str] = []

        def texts() -> Iterator[tuple[str, str]]:
            files = 0
            for file in self._walk(base):
                rel = self._shown(file)
                if wanted is not None and not wanted(rel):
                    continue
                files += 1
                if files > GREP_MAX_FILES:
                    stopped.append(
                        f"… [stopped after {GREP_MAX_FILES} files; narrow the path or glob]"
                    )
                    return
                try:
                    data = read_bytes(file, GREP_MAX_FILE_BYTES, truncate=False)
                except OSError:  # gone, too large, or no longer a regular file
                    continue
                if b"\x00" not in data[:8192]:
                    yield rel, data.decode("utf-8", errors="replace")

        # A model's pattern may backtrack without end: search_texts bounds it (memdir.search.grep).
        try:
            found = search_texts(
                texts(), regex, limit=GREP_MAX_MATCHES, max_line_chars=LINE_MAX_CHARS
            )
        except SlowPatternError as exc:
            raise ProjectToolError(str(exc)) from None
        matches = [f"{m.path}:{m.line + 1}: {m.text[:300]}" for m in found.matches]
        if found.truncated:
            matches.append(f"… [more than {GREP_MAX_MATCHES} matches; narrow the search]")
        else:
            matches += stopped
        return "\n".join(matches) if matches else "No matches."

    def glob(self, pattern: str, path: str = ".") -> str:
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise ProjectToolError("glob patterns are relative to the folder and cannot contain ..")
        base = self.resolve(path)
        matches = _compile_glob(pattern)
        found: list[tuple[float, str]] = []
        for file in self._walk(base):
            rel_to_base = file.relative_to(base).as_posix() if base.is_dir() else file.name
            if matches(rel_to_base):
                with contextlib.suppress(OSError):
                    found.append((file.stat().st_mtime, self._shown(file)))
        found.sort(key=lambda item: (-item[0], item[1]))
        lines = [rel for _, rel in found[:GLOB_MAX_RESULTS]]
        if len(found) > GLOB_MAX_RESULTS:
            lines.append(f"… [{len(found) - GLOB_MAX_RESULTS} more files; narrow the pattern]")
        return "\n".join(lines) if lines else "No files found."


def _string(data: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ProjectToolError(f"`{key}` must be a string")
    return value


def _integer(data: Mapping[str, Any], key: str, default: int) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProjectToolError(f"`{key}` must be an integer")
    return value


# --- the prompt ------------------------------------------------------------------------------


def build_system_prompt(manifest: str, *, index_mode: bool, max_turns: int) -> str:
    """The extraction agent's system prompt: taxonomy, exclusions, how to write, manifest.

    It follows the memory rules Claude Code gives its own extraction agent, in memdir's words
    (docs/agent.md): the frontmatter layout the agent writes, work from the conversation only.
    """
    types = "\n".join(f"- `{name}`: {what}" for name, what in MEMORY_TYPE_GUIDE.items())
    excluded = "\n".join(f"- {item}" for item in DO_NOT_SAVE)
    if index_mode:
        index_rule = (
            "MEMORY.md is the index and is maintained for you: creating, renaming or deleting a "
            "topic file adds, updates or removes its line. Never write memory content into "
            "MEMORY.md."
        )
    else:
        kb = C.SURFACE_MAX_BYTES // 1024
        index_rule = (
            "This memory directory uses relevance prefetch: MEMORY.md is not loaded and not "
            f"maintained. Do not edit it. Recall shows only the first {kb} KB of a memory, so "
            f"keep each file under {kb} KB, frontmatter included, and its description to one "
            "specific line."
        )
    return f"""You are the memory extraction agent of a coding assistant. You read the recent \
conversation between a user and the assistant and save what will still be useful in later \
sessions and cannot be derived from the project itself. You save memories with the `memory` tool \
(files under /memories).

Work from the conversation alone. Do not spend turns investigating or checking what it says: no \
reading code to confirm a pattern, no grepping source files, no git history. The read-only \
`read`, `grep` and `glob` tools reach the project, but this task does not need them.

## What to save: four types, a closed set
{types}

## Do not save
{excluded}
Code changes: a file path or a function saved weeks ago may be false today. Save only what cannot \
be derived from the current state of the project. This holds even when the user asks you to \
remember one of these things: save what was surprising or non-obvious about it, not the thing \
itself.

## How to write
- Read before you write: view /memories and every existing memory that may cover the same \
subject, then update that file instead of creating a duplicate. Delete a memory that turns out \
to be wrong (the memory tool's `delete` command); when the user asks to forget something, \
remove or update the memory that holds it.
- One fact per file: /memories/<short-kebab-case-name>.md, opening with frontmatter in the \
layout Claude Code itself writes:
  ---
  name: <short-kebab-case-name, ASCII letters, digits and hyphens only>
  description: <one specific line: this is what decides whether the memory is ever recalled>
  metadata:
    type: <user|feedback|project|reference>
  ---
  then the memory itself; for feedback and project memories add **Why:** and **How to apply:** \
lines.
- Link related memories as [[name]], the other memory's `name`. Linking to a memory nobody has \
written yet is fine: such a link points at something to write later.
- {index_rule}
- When nothing in the conversation is worth saving, answer "Nothing to save." without calling a \
tool and without explaining why. That is the common case.
- You have at most {max_turns} turns: read everything you need in your first turn, then make \
all the writes in the next; batch independent tool calls into one turn.

## Existing memories (type, file, last modified, description)
{manifest or "(none yet)"}
"""


def build_user_message(conversation: str, project_root: Path) -> str:
    return (
        f"The conversation below took place in the project {project_root}. Extract the memories "
        "worth keeping, following your instructions.\n\n"
        f"<conversation>\n{conversation}\n</conversation>"
    )


# --- locking and the dry-run sandbox ---------------------------------------------------------


class ExtractionBusyError(Exception):
    """Another extraction holds this memory dir's extraction lock."""


@contextlib.contextmanager
def extraction_lock(memory_dir: Path) -> Iterator[None]:
    """Hold the memory dir's extraction lock, or raise :class:`ExtractionBusyError` at once
    (:class:`memdir.writing.writer.WriteError` when memdir's state folder cannot be used)."""
    from filelock import FileLock, Timeout

    path = dir_state(memory_dir) / EXTRACT_LOCK_NAME
    lock = FileLock(str(path), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise ExtractionBusyError(f"another extraction is running on {memory_dir}") from None
    except OSError as exc:
        raise WriteError(f"cannot lock {path}: {exc.strerror or exc}") from exc
    try:
        yield
    finally:
        lock.release()


def _copy_private(source: str, target: str) -> None:
    """Copy a file's bytes into a new file only its owner can read (no mode copied over).

    Only a regular file is copied: a FIFO would block the copy (and the run) for good, a device
    may act on being opened, and neither is a memory; they stay behind."""
    try:
        fd, _info = open_regular(source, follow_links=False)
    except NotRegularFileError:
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(fd, "rb") as reader, os.fdopen(os.open(target, flags, 0o600), "wb") as writer:
        shutil.copyfileobj(reader, writer)


def _copy_for_dry_run(memory_dir: Path, sandbox: Path) -> None:
    # memdir's own leftovers (temp files, what older versions kept in the dir) stay behind: they
    # are no memory, and not something the dry run's diff should show as extraction's doing.
    own = LEGACY_FILENAMES

    def ignore(_directory: str, names: list[str]) -> set[str]:
        return {n for n in names if n in own or TEMP_NAME.match(n) or n.endswith(".tmp")}

    # symlinks=True: links are copied as links, so one leading out still leads out and is still
    # refused by the write checks; nothing outside is ever read into the sandbox.
    shutil.copytree(
        os.path.realpath(memory_dir),
        sandbox,
        symlinks=True,
        ignore=ignore,
        copy_function=_copy_private,
    )
    # copytree gives each folder its source's mode; the 0700 parent already shuts others out,
    # and a copy left behind by a kill stays private on its own too.
    for folder, _subdirs, _files in os.walk(sandbox):
        os.chmod(folder, 0o700)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, someone else's
        return True
    return True


def sweep_dry_run_leftovers(temp_dir: str | None = None) -> list[str]:
    """Remove the dry-run copies of killed runs (ours, their process gone); return their paths.

    A SIGKILL skips every ``finally``: the copy stays (private) until this runs at the start of
    the next dry run.
    """
    temp_dir = temp_dir or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(temp_dir) if n.startswith(DRY_RUN_PREFIX)]
    except OSError:
        return removed
    for name in names:
        pid_text = name[len(DRY_RUN_PREFIX) :].split("-", 1)[0]
        path = os.path.join(temp_dir, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if (
            not pid_text.isdigit()
            or not stat.S_ISDIR(info.st_mode)
            or info.st_uid != os.getuid()
            or _pid_alive(int(pid_text))
        ):
            continue
        shutil.rmtree(path, ignore_errors=True)
        discard_dir_state(Path(path) / _SANDBOX_NAME)  # the copy's lock, in the state folder
        removed.append(path)
    return removed


async def _in_dry_run_copy(
    memory_dir: Path, run: Callable[[Path], Awaitable[ExtractionResult]]
) -> ExtractionResult:
    """``run`` on a private copy of ``memory_dir``, removed afterwards whatever happens."""
    await asyncio.to_thread(sweep_dry_run_leftovers)
    # mkdtemp makes the folder 0700; TemporaryDirectory removes it on every way out.
    with tempfile.TemporaryDirectory(prefix=f"{DRY_RUN_PREFIX}{os.getpid()}-") as scratch:
        sandbox = Path(scratch) / _SANDBOX_NAME
        copy = asyncio.ensure_future(asyncio.to_thread(_copy_for_dry_run, memory_dir, sandbox))
        try:
            await asyncio.shield(copy)
        except asyncio.CancelledError:
            # The thread cannot be stopped: let it finish before the folder is removed, or it
            # would recreate folders of a removed tree, outside the private parent.
            with contextlib.suppress(BaseException):
                await copy
            raise
        try:
            return await run(sandbox)
        finally:
            discard_dir_state(sandbox)  # the copy's lock, gone with the copy


# --- the loop --------------------------------------------------------------------------------


async def _emit(
    callback: ProgressCallback | None, event: ExtractionProgress, known: list[str] | None = None
) -> None:
    if callback is None:
        return
    event = replace(event, message=redact(event.message, known or ()))
    try:
        outcome = callback(event)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:  # a progress display must never end an extraction
        log.warning("extraction progress callback failed", exc_info=True)


def _no_credentials(exc: BaseException) -> bool:
    return isinstance(exc, TypeError) and "Could not resolve authentication" in str(exc)


def _api_error_text(exc: BaseException, known: list[str]) -> str:
    """The error in one line, with ``known`` credentials (and anything like one) redacted."""
    status = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    prefix = f"{type(exc).__name__} (HTTP {status})" if status else type(exc).__name__
    return redact(f"{prefix}: {message}", known)


def _redacted_value(value: object, known: list[str]) -> Any:
    """A tool call's JSON input with every string in it (keys too) passed through redact."""
    if isinstance(value, str):
        return redact(value, known)
    if isinstance(value, Mapping):
        return {redact(str(k), known): _redacted_value(v, known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted_value(v, known) for v in value]
    return value


def _redacted(result: ExtractionResult, known: list[str]) -> ExtractionResult:
    """``result`` with every text a person, a client or a log sees passed through redact.

    A tool call's input is the model's, and may quote a key it read in the transcript (the
    memory tool refuses to write one, but the refused call is still reported); a change's diff
    may show a key a memory held (an edit that removes it). Both are redacted here, after the
    tools ran on the raw input: what is written is unchanged. ``before``/``after`` stay the
    files' real text for callers; no face prints them.
    """
    return replace(
        result,
        reason=None if result.reason is None else redact(result.reason, known),
        changes=tuple(replace(c, diff=redact(c.diff, known)) for c in result.changes),
        summary=redact(result.summary, known),
        warnings=tuple(redact(w, known) for w in result.warnings),
        tool_calls=tuple(
            replace(t, input=_redacted_value(t.input, known), preview=redact(t.preview, known))
            for t in result.tool_calls
        ),
    )


def _preview(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def run_extraction(
    transcript: Path | Transcript,
    memory_dir: Path,
    *,
    project_root: Path | None = None,
    model: str | None = None,
    dry_run: bool = False,
    client: AsyncAnthropic | None = None,
    settings: Settings | None = None,
    max_turns: int = C.EXTRACTION_MAX_TURNS,
    recent_turns: int = RECENT_TURNS,
    max_tokens: int = EXTRACTION_MAX_TOKENS,
    on_progress: ProgressCallback | None = None,
) -> ExtractionResult:
    """Extract memories from a transcript into ``memory_dir`` (see the module docstring).

    ``client`` defaults to ``AsyncAnthropic()`` (credentials from the environment); pass one
    to set the base URL, retries or a test transport. ``max_turns`` can only lower the spec's
    limit of 5. Cancelling the task stops the run between steps and releases the lock; writes
    already made stay (each is atomic).
    """
    result = await _run_extraction(
        transcript,
        memory_dir,
        project_root=project_root,
        model=model,
        dry_run=dry_run,
        client=client,
        settings=settings,
        max_turns=max_turns,
        recent_turns=recent_turns,
        max_tokens=max_tokens,
        on_progress=on_progress,
    )
    return _redacted(result, credential_values(client))


async def _run_extraction(
    transcript: Path | Transcript,
    memory_dir: Path,
    *,
    project_root: Path | None,
    model: str | None,
    dry_run: bool,
    client: AsyncAnthropic | None,
    settings: Settings | None,
    max_turns: int,
    recent_turns: int,
    max_tokens: int,
    on_progress: ProgressCallback | None,
) -> ExtractionResult:
    memory_dir = Path(memory_dir)
    max_turns = max(1, min(max_turns, C.EXTRACTION_MAX_TURNS))
    model = model or DEFAULT_EXTRACTION_MODEL
    base = ExtractionResult("completed", memory_dir, dry_run=dry_run, model=model)

    if isinstance(transcript, Transcript):
        loaded = transcript
    else:
        try:
            loaded = await asyncio.to_thread(read_transcript, Path(transcript))
        except OSError as exc:
            return replace(base, status="error", reason=f"cannot read the transcript: {exc}")
    warnings = [f"transcript line {s.line} skipped: {s.reason}" for s in loaded.skipped]

    written = recent_memory_writes(loaded, memory_dir, recent_turns)
    if written:
        first = written[0]
        return replace(
            base,
            status="skipped",
            reason=(
                f"the recent turns already wrote memory ({first.tool} {first.path}, "
                f"transcript line {first.line})"
            ),
            recent_writes=tuple(written),
            warnings=tuple(warnings),
        )
    if not any(r.is_user_prompt for r in loaded.records):
        return replace(
            base,
            status="skipped",
            reason="the transcript has no conversation",
            warnings=tuple(warnings),
        )
    if not memory_dir.is_dir():
        return replace(base, status="error", reason=f"the memory dir {memory_dir} does not exist")

    if project_root is None:
        cwd = next((r.cwd for r in reversed(loaded.records) if r.cwd), None)
        project_root = Path(cwd) if cwd and Path(cwd).is_dir() else Path.cwd()
    settings = settings or load_settings(memory_dir, project_root)
    try:
        require("anthropic", "extraction")  # the model calls use the SDK (the tool is memdir's)
    except MissingExtraError as exc:
        return replace(base, status="error", reason=str(exc), warnings=tuple(warnings))

    try:
        with extraction_lock(memory_dir):

            def run(workspace: Path) -> Awaitable[ExtractionResult]:
                return _agent_loop(
                    loaded,
                    memory_dir,
                    workspace,
                    project_root,
                    model,
                    client,
                    settings,
                    max_turns,
                    max_tokens,
                    on_progress,
                    base,
                )

            if dry_run:
                result = await _in_dry_run_copy(memory_dir, run)
            else:
                result = await run(memory_dir)
    except ExtractionBusyError as exc:
        return replace(base, status="busy", reason=str(exc), warnings=tuple(warnings))
    except WriteError as exc:  # memdir's state folder cannot be used
        return replace(base, status="error", reason=exc.message, warnings=tuple(warnings))
    return replace(result, warnings=tuple(warnings) + result.warnings)


async def _agent_loop(
    transcript: Transcript,
    memory_dir: Path,
    write_dir: Path,
    project_root: Path,
    model: str,
    client: AsyncAnthropic | None,
    settings: Settings,
    max_turns: int,
    max_tokens: int,
    on_progress: ProgressCallback | None,
    base: ExtractionResult,
) -> ExtractionResult:
    from memdir.writing.memory_tool import TOOL_NAME, TOOL_TYPE, MemdirMemoryTool

    memory_tool = MemdirMemoryTool(write_dir, settings=settings, md_only=True)
    project = ProjectTools(project_root)
    headers = await asyncio.to_thread(scan, memory_dir)
    system = build_system_prompt(
        format_manifest(headers.candidates),
        index_mode=settings.recall_mode == "index",
        max_turns=max_turns,
    )
    tools: list[dict[str, Any]] = [{"type": TOOL_TYPE, "name": TOOL_NAME}, *project.definitions()]
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": build_user_message(render_conversation(transcript), project_root),
        }
    ]
    records: list[ToolCallRecord] = []
    usage = {"input_tokens": 0, "output_tokens": 0}
    turns = 0
    stop_reason: str | None = None
    summary = ""
    error: str | None = None
    own_client = client is None
    known = credential_values(client)

    def finish(status: Status) -> ExtractionResult:
        result = replace(
            base,
            status=status,
            reason=error,
            stop_reason=stop_reason,
            turns=turns,
            changes=merge_changes(memory_tool.changes),
            tool_calls=tuple(records),
            summary=summary,
            warnings=tuple(memory_tool.warnings),
            usage=dict(usage),
        )
        return _redacted(result, known)

    await _emit(on_progress, ExtractionProgress("started", "extracting memories", 0, max_turns))
    try:
        # The SDK takes a second or more to import: off the event loop, so that a server
        # running the extraction keeps answering meanwhile.
        await asyncio.to_thread(importlib.import_module, "anthropic")
        import anthropic

        if client is None:
            try:
                client = anthropic.AsyncAnthropic()
            except anthropic.AnthropicError as exc:  # e.g. a credentials profile that is missing
                error = _api_error_text(exc, known)
                return finish("error")
            known = credential_values(client)
        while turns < max_turns:
            turns += 1
            await _emit(
                on_progress,
                ExtractionProgress("turn", f"turn {turns} of {max_turns}", turns, max_turns),
                known,
            )
            try:
                response = await client.messages.create(
                    model=model,
                    max_tokens=max_tokens,
                    system=system,
                    tools=tools,  # type: ignore[arg-type]
                    messages=messages,  # type: ignore[arg-type]
                )
            except (anthropic.AnthropicError, TypeError) as exc:
                # TypeError: the SDK's way of saying no credentials were found.
                error = NO_CREDENTIALS if _no_credentials(exc) else _api_error_text(exc, known)
                log.warning("extraction ended by an API error: %s", error)
                return finish("error")
            usage["input_tokens"] += response.usage.input_tokens
            usage["output_tokens"] += response.usage.output_tokens
            stop_reason = response.stop_reason
            messages.append({"role": "assistant", "content": response.content})
            texts = [block.text for block in response.content if block.type == "text"]
            if texts:
                summary = "\n".join(texts).strip()
            uses = [block for block in response.content if block.type == "tool_use"]
            if not uses:
                break
            results: list[dict[str, Any]] = []
            for use in uses:
                outcome = await _dispatch(use.name, use.input, memory_tool, project, known)
                records.append(
                    ToolCallRecord(
                        turns,
                        use.name,
                        dict(_mapping(use.input)),
                        outcome.is_error,
                        _preview(outcome.text),
                    )
                )
                await _emit(
                    on_progress,
                    ExtractionProgress(
                        "tool", f"{use.name}: {_preview(outcome.text, 80)}", turns, max_turns
                    ),
                    known,
                )
                results.append(outcome.to_block(use.id))
            messages.append({"role": "user", "content": results})
        else:
            stop_reason = "max_turns"
    finally:
        if own_client and client is not None:
            with contextlib.suppress(Exception):
                await client.close()
        await _emit(
            on_progress, ExtractionProgress("finished", "extraction finished", turns, max_turns)
        )
    return finish("completed")


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


async def _dispatch(
    name: str,
    data: object,
    memory_tool: MemdirMemoryTool,
    project: ProjectTools,
    known: list[str],
) -> ToolResult:
    from memdir.writing.memory_tool import TOOL_NAME, ToolResult

    try:
        if name == TOOL_NAME:
            return await memory_tool.arun(data)
        if name in ("read", "grep", "glob"):
            outcome = await asyncio.to_thread(project.call, name, _mapping(data))
            return ToolResult(outcome.text, outcome.is_error)
    except Exception as exc:
        # A fault in a tool is reported to the model and logged; it must not end the run
        # (the tools themselves turn every expected failure into an error result).
        # The traceback only at DEBUG: its text is not redacted.
        log.error(
            "extraction tool %s failed: %s", name, redact(f"{type(exc).__name__}: {exc}", known)
        )
        log.debug("extraction tool %s failed", name, exc_info=True)
        return ToolResult(f"Error: the {name} tool failed: {exc}", True)
    return ToolResult(f"Error: no tool named {name!r}; use memory, read, grep or glob", True)


def extract(transcript: Path, memory_dir: Path, **options: Any) -> ExtractionResult:
    """:func:`run_extraction` for synchronous callers (the CLI)."""
    return asyncio.run(run_extraction(transcript, memory_dir, **options))


def format_result(result: ExtractionResult, name: Callable[[str], str] = str) -> str:
    """A short human report: what was (or would be) written, and why not when nothing was.
    ``name`` turns a path relative to the memory dir into the one to print (the command line
    names files from the working directory)."""
    verb = {
        "created": "would create",
        "changed": "would change",
        "deleted": "would delete",
        "renamed": "would rename",
    }
    lines: list[str] = []
    if result.status in ("skipped", "busy"):
        lines.append(f"{result.status}: {result.reason}")
    elif result.status == "error":
        lines.append(f"error: {result.reason}")
    for change in result.changes:
        word = verb[change.kind] if result.dry_run else change.kind
        target = name(change.path)
        if change.new_path:
            target += f" -> {name(change.new_path)}"
        lines.append(f"{word} {target}")
        if result.dry_run and change.diff:
            lines.extend("    " + line for line in change.diff.rstrip("\n").split("\n"))
    if result.status == "completed":
        if not result.changes:
            lines.append("nothing saved" if not result.dry_run else "nothing would be saved")
        ending = "turn limit reached" if result.stop_reason == "max_turns" else result.stop_reason
        dry = " (dry run: nothing written)" if result.dry_run else ""
        lines.append(f"-- {result.turns} turn(s), {ending}{dry}")
    lines.extend(f"warning: {w}" for w in result.warnings)
    return "\n".join(lines)


def dumps(result: ExtractionResult) -> str:
    return json.dumps(result.to_json(), ensure_ascii=False, indent=2)
