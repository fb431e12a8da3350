"""Reading Claude Code session transcripts: the JSONL files the agent writes, one record a line.

Each line is a JSON object; conversation records have ``type`` ``user`` or ``assistant`` and a
``message`` in the Messages API shape (``content`` a string or a list of ``text``,
``tool_use``, ``tool_result``, ``thinking`` ... blocks), plus ``uuid``, ``timestamp``, ``cwd``,
``isSidechain`` (a sub-agent's messages) and ``isMeta`` (text the client injected). Other record
types (``summary`` after compaction, ``system``, ``file-history-snapshot``, and whatever a later
version adds) are kept as records without a message or skipped. A broken line (a crash mid-write,
a truncated copy, JSON nested too deep to parse) is reported and skipped, never fatal: the
transcript is evidence, read as much of it as can be read. A transcript is also untrusted input
(the hook is told its path): only its last :data:`TAIL_MAX_BYTES` are read, from a regular file,
without blocking, so a FIFO, a device or a 10 GB file named as one costs next to nothing.

For the extraction agent (spec section 8) this module answers two questions: did the recent
turns already write memory (then extraction is skipped), and what did the conversation say
(rendered as compact text for the extraction prompt).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from memdir import constants as C
from memdir.recall.surface import header_paths
from memdir.textio import read_tail
from memdir.writing.memory_commands import SHOWING_COMMANDS, memories_relative

#: Tools of the agent that write a file named by ``file_path`` (or ``notebook_path``).
FILE_WRITE_TOOLS: Final = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
#: Tools taking an API-style ``command`` and ``path`` (the memory tool, the text editor tool).
COMMAND_WRITE_TOOLS: Final = frozenset({"memory", "str_replace_based_edit_tool"})
MUTATING_COMMANDS: Final = frozenset({"create", "str_replace", "insert", "delete", "rename"})
#: Shell tools whose command line is read for writes into the memory dir.
SHELL_TOOLS: Final = frozenset({"Bash"})
#: Programs that change the files named among their arguments (``sed``/``perl`` only with -i).
SHELL_WRITERS: Final = frozenset(
    {"tee", "cp", "mv", "rm", "touch", "mkdir", "rmdir", "ln", "install", "truncate", "unlink"}
    | {"rsync", "dd", "sed", "perl", "patch", "chmod"}
)
#: Redirections that write the file named after them.
_REDIRECTS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "1>", "2>", "1>>", "2>>"})
#: Tokens that end one simple command and start the next.
_SEPARATORS: Final = frozenset({";", ";;", "&&", "||", "|", "&", "|&", "(", ")"})
#: A transcript is read from its end, this much of it at most (its first partial line dropped):
#: the hook and extraction need the recent turns, and the hook keeps what it learnt from
#: earlier ones in its session file. 8 MiB holds hundreds of ordinary turns.
TAIL_MAX_BYTES: Final = 8 * 1024 * 1024
#: The rendered conversation keeps the most recent messages within this many characters.
RENDER_MAX_CHARS: Final = 60_000
#: Per-item caps in the rendering, so one huge tool result cannot crowd out the conversation.
RENDER_TEXT_MAX_CHARS: Final = 4_000
RENDER_TOOL_INPUT_MAX_CHARS: Final = 600
RENDER_TOOL_RESULT_MAX_CHARS: Final = 1_200


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class ToolResultBlock:
    tool_use_id: str
    text: str
    is_error: bool


@dataclass(frozen=True)
class Record:
    """One readable line of a transcript."""

    #: 1-based line number in what was read: the file's own, unless only its tail was read
    #: (:attr:`Transcript.partial`), then counted from the tail's first line.
    line: int
    type: str
    #: ``user`` or ``assistant`` for conversation records, else None.
    role: str | None
    #: The text blocks joined (or the string content); a summary's text for ``summary`` records.
    text: str
    tool_uses: tuple[ToolUse, ...] = ()
    tool_results: tuple[ToolResultBlock, ...] = ()
    is_meta: bool = False
    is_sidechain: bool = False
    cwd: str | None = None
    timestamp: str | None = None
    uuid: str | None = None
    #: For a tool result of an MCP tool: the name the server gave itself (``serverInfo`` in the
    #: ``_meta`` Claude Code keeps as ``mcpMeta``), whatever name the user registered it under.
    mcp_server: str | None = None

    @property
    def is_user_prompt(self) -> bool:
        """A message the user typed: where a turn starts (not a tool result, not injected)."""
        return (
            self.role == "user"
            and not self.is_meta
            and not self.is_sidechain
            and not (self.tool_results and not self.text.strip())
        )


@dataclass(frozen=True)
class SkippedLine:
    line: int
    reason: str


@dataclass(frozen=True)
class Transcript:
    path: Path | None
    records: tuple[Record, ...]
    skipped: tuple[SkippedLine, ...]
    #: Only the file's last :data:`TAIL_MAX_BYTES` were read; earlier records are not here.
    partial: bool = False

    @property
    def conversation(self) -> tuple[Record, ...]:
        """The main conversation: user and assistant records, sub-agents' excluded."""
        return tuple(r for r in self.records if r.role is not None and not r.is_sidechain)

    def turns(self) -> list[list[Record]]:
        """The conversation split into turns, each starting at a user prompt."""
        turns: list[list[Record]] = []
        for record in self.records:
            if record.role is None and record.type != "summary":
                continue
            if record.is_user_prompt or not turns:
                turns.append([])
            turns[-1].append(record)
        return turns

    def recent(self, turn_count: int = 1) -> list[Record]:
        """The records of the last ``turn_count`` turns (sub-agents' included)."""
        turns = self.turns()
        return [record for turn in turns[-turn_count:] for record in turn] if turn_count else []


@dataclass(frozen=True)
class MemoryWrite:
    """A tool call in a transcript that wrote into the memory dir."""

    line: int
    tool: str
    path: str
    command: str | None = None


def _block_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return ""


def parse_record(data: Mapping[str, Any], line: int) -> Record:
    """One JSON object of a transcript as a :class:`Record` (unknown shapes give empty fields)."""
    kind = str(data.get("type", ""))
    message = data.get("message")
    role: str | None = None
    text = ""
    tool_uses: list[ToolUse] = []
    tool_results: list[ToolResultBlock] = []
    if isinstance(message, Mapping) and kind in ("user", "assistant"):
        role = str(message.get("role") or kind)
        content = message.get("content")
        text = _block_text(content)
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, Mapping):
                    continue
                if block.get("type") == "tool_use":
                    raw_input = block.get("input")
                    tool_uses.append(
                        ToolUse(
                            str(block.get("id", "")),
                            str(block.get("name", "")),
                            raw_input if isinstance(raw_input, Mapping) else {},
                        )
                    )
                elif block.get("type") == "tool_result":
                    tool_results.append(
                        ToolResultBlock(
                            str(block.get("tool_use_id", "")),
                            _block_text(block.get("content")),
                            bool(block.get("is_error", False)),
                        )
                    )
    elif kind == "summary":
        text = str(data.get("summary", ""))
    cwd = data.get("cwd")
    server = _mcp_server(data.get("mcpMeta"))
    return Record(
        line=line,
        type=kind,
        role=role,
        text=text,
        tool_uses=tuple(tool_uses),
        tool_results=tuple(tool_results),
        is_meta=bool(data.get("isMeta", False)),
        is_sidechain=bool(data.get("isSidechain", False)),
        cwd=cwd if isinstance(cwd, str) else None,
        timestamp=str(data["timestamp"]) if "timestamp" in data else None,
        uuid=str(data["uuid"]) if "uuid" in data else None,
        mcp_server=server,
    )


def _mcp_server(meta: object) -> str | None:
    """``mcpMeta._meta["io.modelcontextprotocol/serverInfo"].name``, or None."""
    inner = meta.get("_meta") if isinstance(meta, Mapping) else None
    info = inner.get("io.modelcontextprotocol/serverInfo") if isinstance(inner, Mapping) else None
    name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) else None


def parse_transcript(lines: Iterable[str], path: Path | None = None) -> Transcript:
    """Parse JSONL lines; blank lines are ignored, broken ones reported in ``skipped``."""
    records: list[Record] = []
    skipped: list[SkippedLine] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except ValueError as exc:
            skipped.append(SkippedLine(number, f"not JSON: {exc}"))
            continue
        except RecursionError:  # ``[[[[…`` deeper than the parser's stack: not a record
            skipped.append(SkippedLine(number, "not JSON: nested too deeply"))
            continue
        if not isinstance(data, dict):
            skipped.append(SkippedLine(number, f"a JSON {type(data).__name__}, not an object"))
            continue
        records.append(parse_record(data, number))
    return Transcript(path, tuple(records), tuple(skipped))


def read_transcript(
    path: Path,
    *,
    max_bytes: int = TAIL_MAX_BYTES,
    follow_links: bool = True,
    naming: Sequence[str] = (),
) -> Transcript:
    """Read a transcript file's last ``max_bytes`` (undecodable bytes are replaced, never fatal).

    With ``naming``, only lines containing one of those strings (as they appear in the JSON
    text) are parsed: the hook looks for records naming the memory dir, so a long transcript
    costs it little. Raises ``OSError`` when the file cannot be opened at all, and
    :class:`~memdir.textio.NotRegularFileError` (an OSError) for a FIFO, device or directory, or,
    without ``follow_links``, a symlink.
    """
    data, _, partial = read_tail(path, max_bytes, follow_links=follow_links)
    lines: Iterable[bytes] = data.split(b"\n")
    if naming:
        needles = [n.encode("utf-8", "surrogatepass") for n in naming]
        lines = (line if any(n in line for n in needles) else b"" for line in lines)
    transcript = parse_transcript((line.decode("utf-8", "replace") for line in lines), path)
    return replace(transcript, partial=partial)


# --- memory writes ---------------------------------------------------------------------------


def _inside(candidate: str, cwd: str | None, roots: Sequence[str]) -> bool:
    path = os.path.expanduser(candidate)
    if not os.path.isabs(path):
        if cwd is None:
            return False
        path = os.path.join(cwd, path)
    spellings = {os.path.normpath(path), os.path.realpath(path)}
    return any(
        s == root or s.startswith(root.rstrip(os.sep) + os.sep) for s in spellings for root in roots
    )


def _shell_words(command: str) -> list[str] | None:
    """The words and operators of a shell command line, or None when it does not parse."""
    # A newline ends a command as ";" does (inside a quoted string it changes nothing we read).
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: a command the shell would not have run as written
        return None


def shell_write_target(command: str, cwd: str | None, roots: Sequence[str]) -> str | None:
    """The memory-dir path a shell command line writes, or None.

    Counted: a redirection into the dir (``> f``, ``>> f``, ``&> f``), and a file-changing program
    (``tee``, ``cp``, ``mv``, ``rm``, ``touch``, ``sed -i`` ...) with an argument inside the dir.
    Reading (``cat``, ``grep``, ``ls``) is not a write. A line that does not parse but names the
    dir next to a ``>`` counts too: a missed write would let extraction run beside the agent's
    own, a false one only skips extraction for a turn.
    """
    words = _shell_words(command)
    if words is None:
        if ">" in command:
            candidate: str
            for candidate in re.findall(r"""[^\s'"<>|;&]+""", command):
                if _inside(candidate, cwd, roots):
                    return candidate
        return None
    commands: list[list[str]] = [[]]
    for position, word in enumerate(words):
        if word in _SEPARATORS:
            commands.append([])
        elif word in _REDIRECTS or (word.endswith(">") and word.rstrip(">&").isdigit()):
            following = words[position + 1] if position + 1 < len(words) else ""
            if following and _inside(following, cwd, roots):
                return following
        elif not (position and words[position - 1] in _REDIRECTS):
            commands[-1].append(word)
    for command_words in commands:
        target = _program_write(command_words, cwd, roots)
        if target is not None:
            return target
    return None


#: Programs that write only their last argument (the destination), not their sources.
_DESTINATION_ONLY: Final = frozenset({"cp", "install", "rsync", "ln"})


def _program_write(words: Sequence[str], cwd: str | None, roots: Sequence[str]) -> str | None:
    """The memory-dir path one simple command (no operators) changes, or None."""
    position = 0
    while position < len(words) and (
        ("=" in words[position] and not words[position].startswith("="))
        or os.path.basename(words[position]) in {"sudo", "env", "command", "nohup", "xargs"}
    ):
        position += 1  # NAME=value assignments and wrappers before the program
    if position >= len(words):
        return None
    program = os.path.basename(words[position])
    if program not in SHELL_WRITERS:
        return None
    flags = [w for w in words[position + 1 :] if w.startswith("-")]
    if program in {"sed", "perl"} and not any(
        f.startswith("-i")
        or f == "--in-place"
        or (program == "perl" and not f.startswith("--") and "i" in f[1:])
        for f in flags
    ):
        return None
    arguments = [w for w in words[position + 1 :] if not w.startswith("-")]
    if program in _DESTINATION_ONLY:
        arguments = arguments[-1:]
    elif program == "dd":
        arguments = [w[3:] for w in arguments if w.startswith("of=")]
    for argument in arguments:
        if _inside(argument, cwd, roots):
            return argument
    return None


def memory_writes(records: Iterable[Record], memory_dir: Path) -> list[MemoryWrite]:
    """Tool calls among ``records`` that wrote into ``memory_dir``.

    Write/Edit/MultiEdit/NotebookEdit count when their path lies in the memory dir (as written,
    or with symlinks resolved; relative paths against the record's ``cwd``); the memory tool
    counts for every mutating command, since its ``/memories`` tree *is* a memory dir; a Bash
    command counts when it redirects into the dir or runs a file-changing program on a path in
    it (:func:`shell_write_target`).
    """
    roots = list(dict.fromkeys((os.path.abspath(memory_dir), os.path.realpath(memory_dir))))
    found: list[MemoryWrite] = []
    for record in records:
        for use in record.tool_uses:
            if use.name in FILE_WRITE_TOOLS:
                target = use.input.get("file_path") or use.input.get("notebook_path")
                if isinstance(target, str) and _inside(target, record.cwd, roots):
                    found.append(MemoryWrite(record.line, use.name, target))
            elif use.name in COMMAND_WRITE_TOOLS:
                command = use.input.get("command")
                if command not in MUTATING_COMMANDS:
                    continue
                target = use.input.get("path") or use.input.get("old_path")
                if not isinstance(target, str):
                    continue
                if use.name == "memory" or _inside(target, record.cwd, roots):
                    found.append(MemoryWrite(record.line, use.name, target, str(command)))
            elif use.name in SHELL_TOOLS:
                line = use.input.get("command")
                if not isinstance(line, str):
                    continue
                target = shell_write_target(line, record.cwd, roots)
                if target is not None:
                    found.append(MemoryWrite(record.line, use.name, target, line))
    return found


#: memdir's MCP tools as the agent names them, ``mcp__<server>__<tool>``: the server's name is
#: the user's choice (``claude mcp add NAME``), the tools' are memdir's.
_MCP_MEMDIR_TOOL: Final = re.compile(r"mcp__(?P<server>.+)__(?P<tool>memory|memory_recall)")


def _names_dir(directory: object, memory_dir: Path) -> bool:
    """Whether a tool call's ``directory`` argument (absent, a path or a label) means
    ``memory_dir``. A label is the dir's project (``<project>/memory``) or its name, as
    ``memdir mcp`` labels the dirs it serves."""
    if directory is None or (isinstance(directory, str) and not directory.strip()):
        return True
    if not isinstance(directory, str):
        return False
    if directory.startswith(("/", "~")):
        return os.path.realpath(os.path.expanduser(directory)) == os.path.realpath(memory_dir)
    label = memory_dir.parent.name if memory_dir.name == "memory" else memory_dir.name
    return directory == label


def mcp_memories_seen(records: Iterable[Record], memory_dir: Path) -> list[str]:
    """Paths in ``memory_dir`` (absolute, as named) that memdir's MCP tools showed the model or
    wrote for it, among ``records``: the memory tool's ``view``, ``create``, ``str_replace``,
    ``insert`` and ``rename`` (its ``/memories`` tree is the memory dir of the project, which is
    what ``memdir mcp`` serves by default), and the memories a ``memory_recall`` result gave.

    A call whose result is in ``records`` counts only when the result is not an error and, where
    Claude Code kept the server's own name with it, that name is memdir's (another server may
    have a tool called ``memory``). A call whose result is not there (the transcript's tail cut
    it off, or the turn is still running) counts by its input alone.
    """
    records = list(records)
    results: dict[str, tuple[ToolResultBlock, str | None]] = {
        result.tool_use_id: (result, record.mcp_server)
        for record in records
        for result in record.tool_results
    }
    seen: list[str] = []
    for record in records:
        for use in record.tool_uses:
            match = _MCP_MEMDIR_TOOL.fullmatch(use.name)
            if match is None or not _names_dir(use.input.get("directory"), memory_dir):
                continue
            result, server = results.get(use.id, (None, None))
            if result is not None and (result.is_error or server not in (None, C.MCP_SERVER_NAME)):
                continue
            if match["tool"] == "memory_recall":
                if result is not None:
                    seen += [p for p in header_paths(result.text) if os.path.isabs(p)]
                continue
            field = SHOWING_COMMANDS.get(str(use.input.get("command")))
            relative = memories_relative(use.input.get(field)) if field else None
            if relative is not None:
                seen.append(os.path.normpath(os.path.join(memory_dir, relative)))
    return seen


def recent_memory_writes(
    transcript: Transcript, memory_dir: Path, turn_count: int = 1
) -> list[MemoryWrite]:
    """Memory writes in the last ``turn_count`` turns (spec 8: then extraction is skipped)."""
    return memory_writes(transcript.recent(turn_count), memory_dir)


# --- rendering for the extraction prompt -----------------------------------------------------


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f" … [{len(text) - limit:,} more characters]"


def _render_record(record: Record) -> list[str]:
    lines: list[str] = []
    if record.type == "summary" and record.text:
        lines.append(
            f"[summary of earlier conversation]\n{_cut(record.text, RENDER_TEXT_MAX_CHARS)}"
        )
    if record.role == "user":
        if record.text.strip():
            lines.append(f"[user]\n{_cut(record.text, RENDER_TEXT_MAX_CHARS)}")
        for result in record.tool_results:
            label = "tool error" if result.is_error else "tool result"
            lines.append(f"[{label}]\n{_cut(result.text, RENDER_TOOL_RESULT_MAX_CHARS)}")
    elif record.role == "assistant":
        if record.text.strip():
            lines.append(f"[assistant]\n{_cut(record.text, RENDER_TEXT_MAX_CHARS)}")
        for use in record.tool_uses:
            arguments = json.dumps(dict(use.input), ensure_ascii=False)
            lines.append(
                f"[assistant calls {use.name}] {_cut(arguments, RENDER_TOOL_INPUT_MAX_CHARS)}"
            )
    return lines


def render_conversation(transcript: Transcript, max_chars: int = RENDER_MAX_CHARS) -> str:
    """The main conversation as compact text, the most recent part within ``max_chars``.

    Injected (``isMeta``) messages and sub-agents' messages are left out; long texts, tool
    inputs and tool results are cut, so the prompt shows what was said and done, not every
    byte of every file read.
    """
    blocks: list[str] = []
    for record in transcript.records:
        if record.is_sidechain or record.is_meta:
            continue
        blocks.extend(_render_record(record))
    kept: list[str] = []
    total = 0
    for block in reversed(blocks):
        if total + len(block) + 2 > max_chars:
            kept.append(f"[… {len(blocks) - len(kept)} earlier items left out]")
            break
        kept.append(block)
        total += len(block) + 2
    return "\n\n".join(reversed(kept))
