"""The extraction agent's read-only project tools: ``read``, ``grep`` and ``glob`` confined to the
project root, each with output caps (enough to check a fact, not to page a repository in)."""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from memdir.containment import relative_inside
from memdir.search.grep import (
    InvalidPatternError,
    SlowPatternError,
    compile_glob,
    compile_pattern,
    glob_matcher,
    search_texts,
)
from memdir.textio import open_regular, read_bytes

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
