"""Which agent's memory a directory holds: Claude Code's, or another's that memdir leaves alone.

memdir reads Claude Code's memory format (an index, ``MEMORY.md``, and topic files with YAML
frontmatter). Repositories also commit other agents' memory, which looks alike at a glance
(Markdown, often a ``MEMORY.md``) and is nothing like it: OpenClaw's workspace (``SOUL.md``,
``IDENTITY.md``, ``memory/YYYY-MM-DD.md`` logs), Hermes' ``§``-separated ``MEMORY.md`` and
``USER.md``, Aeon's consolidated ``MEMORY.md`` with ``logs/``, the memory banks of Cline, Roo,
Kilo and cursor-memory-bank, Serena's ``.serena/memories``, folders of dated session logs.
Checked as Claude Code's, each gives dozens of findings that are all noise, and a fix would
damage it.

:func:`recognise` is a pure function of a directory's listing (:class:`Listing`: its names, a few
of its folders' names and the first lines of a few files); :func:`recognise_dir` reads that
listing, boundedly (:mod:`memdir.textio`), and asks it. Either answers the other format with a
one-sentence reason, or None: Claude Code's format, which includes an empty or new directory and
a Claude Code directory with a few files of its own beside the memories. Precision comes first:
a name-based signature never wins over topic files that carry Claude Code's frontmatter.

:func:`notice` is the one sentence every face (the command line, the language server, the hook,
the MCP server) says instead of checking or writing such a directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memdir import constants as C

#: The CLI flag, and the settings key (``memdir.toml``, ``[tool.memdir]``, the editor), that
#: check a directory as Claude Code's whatever it looks like.
FORCE_FLAG = "--any-format"
FORCE_SETTING = "any_format"

#: At most this many names of a directory, and of each folder looked into, are listed.
MAX_LISTED_NAMES = 2000
#: The topic files whose heads are read to see Claude Code's frontmatter, at most ...
MAX_SAMPLED_TOPICS = 16
#: ... and of each file read, at most this many lines and bytes; more of ``MEMORY.md`` and
#: ``USER.md``, whose first entry may be long before a separator shows.
HEAD_LINES = 12
HEAD_BYTES = 2048
INDEX_HEAD_LINES = 40
INDEX_HEAD_BYTES = 8192
#: Folders whose names a signature reads (lower case).
LOOKED_INTO = ("memory", "logs", "issues", "creative", "reflection", "archive")

_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}")
_FRONTMATTER_KEY = re.compile(r"^(?:name|description|type|metadata)\s*:", re.MULTILINE)
_HERMES_SEPARATOR = "§"
_AEON_STAMP = re.compile(r"^\*?Last consolidated:", re.MULTILINE | re.IGNORECASE)

_OPENCLAW_COMPANIONS = (
    "identity.md",
    "agents.md",
    "heartbeat.md",
    "user.md",
    "tools.md",
    "bootstrap.md",
)
#: Cline's core files; Roo (RooFlow) and cursor-memory-bank keep most of them too.
_BANK_CORE = (
    "projectbrief.md",
    "productcontext.md",
    "activecontext.md",
    "systempatterns.md",
    "techcontext.md",
    "progress.md",
)
_CURSOR_FOLDERS = ("creative", "reflection", "archive")
_KILO_CORE = ("product.md", "context.md", "architecture.md", "tech.md", "tasks.md")
_SERENA_FILES = (
    "project_overview.md",
    "suggested_commands.md",
    "style_and_conventions.md",
    "code_style_and_conventions.md",
    "task_completion_checklist.md",
    "what_to_do_when_task_completed.md",
)
#: Serena's own: ``project_overview.md`` alone is a name Claude Code memories use too.
_SERENA_OWN = (
    "suggested_commands.md",
    "task_completion_checklist.md",
    "what_to_do_when_task_completed.md",
)
#: A folder of dated logs: at least this many topic files, at least half named by a date.
MIN_DATED_LOGS = 3
#: Notes kept by hand beside an index: at least this many topic files, every one read and none
#: with frontmatter. Fewer is a new Claude Code directory with a memory or two written by hand,
#: which is checked (MEM101 offers the frontmatter).
MIN_HAND_KEPT = 3


@dataclass(frozen=True)
class Recognised:
    """Another agent's memory format, and why the directory looks like it."""

    #: A stable name for machines (``openclaw``, ``hermes``, ...).
    key: str
    #: For a person: ``OpenClaw's workspace memory``.
    name: str
    #: What was seen, one clause: ``it holds SOUL.md and IDENTITY.md``.
    reason: str


@dataclass(frozen=True)
class Listing:
    """What :func:`recognise` reads of a directory: names and the first lines of a few files.

    ``names`` are the directory's own entries (lower case); ``folders`` the names (lower case)
    inside the folders of :data:`LOOKED_INTO` that exist; ``heads`` the first lines of
    ``MEMORY.md``, ``USER.md`` and of up to :data:`MAX_SAMPLED_TOPICS` topic files at the top,
    by their names as listed (lower case).
    """

    names: frozenset[str]
    folders: Mapping[str, frozenset[str]] = field(default_factory=dict)
    heads: Mapping[str, str] = field(default_factory=dict)


def notice(recognised: Recognised) -> str:
    """The one sentence every face says instead of checking or writing the directory."""
    from memdir.config import CONFIG_FILENAME

    return (
        f"looks like {recognised.name}, not Claude Code's ({recognised.reason}): nothing "
        f"checked, nothing written; pass {FORCE_FLAG} or set `{FORCE_SETTING} = true` in "
        f"{CONFIG_FILENAME} to treat it as Claude Code's"
    )


def _present(listing: Listing, names: Iterable[str]) -> list[str]:
    return [name for name in names if name in listing.names]


def _shown(names: Iterable[str]) -> str:
    shown = list(names)
    return ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else "".join(shown)


def _topic_names(listing: Listing) -> list[str]:
    return sorted(n for n in listing.names if n.endswith(".md") and n != C.INDEX_FILENAME.lower())


def _claude_topics(listing: Listing) -> bool:
    """Whether at least half of the sampled topic files carry Claude Code's frontmatter."""
    sampled = [
        head
        for name, head in listing.heads.items()
        if name not in (C.INDEX_FILENAME.lower(), "user.md")
    ]
    if not sampled:
        return False
    claude = sum(1 for head in sampled if _frontmatter(head))
    return 2 * claude >= len(sampled)


def _frontmatter(head: str) -> bool:
    lines = head.split("\n")
    if not lines or lines[0].strip() != "---":
        return False
    block: list[str] = []
    for line in lines[1:]:
        if line.strip() == "---":
            return bool(_FRONTMATTER_KEY.search("\n".join(block)))
        block.append(line)
    # A block cut by the head's bound still shows its keys.
    return bool(_FRONTMATTER_KEY.search("\n".join(block)))


def _hermes(listing: Listing) -> Recognised | None:
    for name in (C.INDEX_FILENAME.lower(), "user.md"):
        head = listing.heads.get(name, "")
        if any(line.strip() == _HERMES_SEPARATOR for line in head.split("\n")):
            shown = C.INDEX_FILENAME if name == C.INDEX_FILENAME.lower() else "USER.md"
            return Recognised(
                "hermes",
                "Hermes' memory",
                f"{shown} holds entries separated by lines of {_HERMES_SEPARATOR}",
            )
    return None


def _openclaw(listing: Listing) -> Recognised | None:
    if "soul.md" not in listing.names:
        return None
    companions = _present(listing, _OPENCLAW_COMPANIONS)
    logs = [n for n in listing.folders.get("memory", ()) if _DATED.match(n)]
    if not companions and not logs:
        return None
    seen = ["SOUL.md", *(n.upper().removesuffix(".MD") + ".md" for n in companions[:2])]
    if logs:
        seen.append("memory/YYYY-MM-DD.md logs")
    return Recognised("openclaw", "OpenClaw's workspace memory", f"it holds {_shown(seen)}")


def _aeon(listing: Listing) -> Recognised | None:
    if C.INDEX_FILENAME.lower() not in listing.names:
        return None
    logs = [n for n in listing.folders.get("logs", ()) if _DATED.match(n) and n.endswith(".md")]
    stamped = bool(_AEON_STAMP.search(listing.heads.get(C.INDEX_FILENAME.lower(), "")))
    own = "watched-repos.md" in listing.names or "index.md" in listing.folders.get("issues", ())
    if logs and (stamped or own):
        return Recognised(
            "aeon",
            "Aeon's memory",
            "a consolidated MEMORY.md beside logs/YYYY-MM-DD.md run logs",
        )
    return None


def _banks(listing: Listing) -> Recognised | None:
    core = _present(listing, _BANK_CORE)
    folders = [f for f in _CURSOR_FOLDERS if f in listing.folders]
    if "tasks.md" in listing.names and (len(core) >= 2 or folders):
        seen = ["tasks.md", *_cased(core[:2]), *(f + "/" for f in folders[:2])]
        return Recognised(
            "cursor-memory-bank", "cursor-memory-bank's memory bank", f"it holds {_shown(seen)}"
        )
    if "decisionlog.md" in listing.names and len(core) >= 2:
        return Recognised(
            "roo-memory-bank",
            "Roo's memory bank (RooFlow)",
            f"it holds decisionLog.md, {_shown(_cased(core[:2]))}",
        )
    if len(core) >= 3:
        return Recognised(
            "cline-memory-bank", "Cline's memory bank", f"it holds {_shown(_cased(core[:3]))}"
        )
    kilo = _present(listing, _KILO_CORE)
    if "brief.md" in listing.names and len(kilo) >= 2:
        return Recognised(
            "kilo-memory-bank",
            "Kilo Code's memory bank",
            f"it holds {_shown(['brief.md', *kilo[:2]])}",
        )
    serena = _present(listing, _SERENA_FILES)
    if len(serena) >= 2 and _present(listing, _SERENA_OWN):
        return Recognised("serena", "Serena's memories", f"it holds {_shown(serena[:3])}")
    return None


_CASED = {
    name.lower(): name
    for name in (
        "projectbrief.md",
        "productContext.md",
        "activeContext.md",
        "systemPatterns.md",
        "techContext.md",
        "progress.md",
    )
}


def _cased(names: Iterable[str]) -> list[str]:
    return [_CASED.get(name, name) for name in names]


def _dated_logs(listing: Listing) -> Recognised | None:
    topics = _topic_names(listing)
    dated = [n for n in topics if _DATED.match(n)]
    if len(dated) >= MIN_DATED_LOGS and 2 * len(dated) >= len(topics):
        return Recognised(
            "dated-logs",
            "a folder of dated session logs",
            f"{len(dated)} of its {len(topics)} notes are named by date, like YYYY-MM-DD.md, "
            "and carry no frontmatter",
        )
    return None


def _hand_kept(listing: Listing) -> Recognised | None:
    """An index beside notes none of which has frontmatter: kept by hand (a repository's
    ``.claude/memory/`` that its CLAUDE.md tells the agent to read), not the agent's auto memory,
    whose every memory opens with ``---`` frontmatter. Only when every topic file was read: one
    with frontmatter, even not the agent's keys, makes the directory Claude Code's."""
    if C.INDEX_FILENAME.lower() not in listing.names:
        return None
    topics = _topic_names(listing)
    heads = [listing.heads.get(n) for n in topics]
    if len(topics) < MIN_HAND_KEPT or any(h is None for h in heads):
        return None
    if any((h or "").lstrip("\ufeff").startswith("---") for h in heads):
        return None
    return Recognised(
        "hand-kept",
        "notes kept by hand or by another tool",
        f"none of its {len(topics)} notes has the frontmatter the agent writes in its memories",
    )


def recognise(listing: Listing) -> Recognised | None:
    """Another agent's format this listing shows, or None for Claude Code's."""
    hermes = _hermes(listing)
    if hermes is not None:
        return hermes
    # Topic files written in Claude Code's format make it Claude Code's, whatever else is there.
    if _claude_topics(listing):
        return None
    for signature in (_openclaw, _aeon, _banks, _dated_logs, _hand_kept):
        found = signature(listing)
        if found is not None:
            return found
    return None


def _names(path: Path) -> list[str] | None:
    try:
        with os.scandir(path) as entries:
            names: list[str] = []
            for entry in entries:
                names.append(entry.name)
                if len(names) >= MAX_LISTED_NAMES:
                    break
            return names
    except OSError:
        return None


def _head(path: Path, lines: int = HEAD_LINES, size: int = HEAD_BYTES) -> str:
    from memdir.textio import read_head

    result = read_head(path, lines, size)
    return "" if result.binary else result.text


def read_listing(root: Path) -> Listing:
    """The listing :func:`recognise` reads, read boundedly: names, folders' names, a few heads.

    No symlink leads out: a folder is looked into, and a file's head read, only when it is
    really inside ``root`` (regular files only, through :mod:`memdir.textio`)."""
    names = _names(root) or []
    lowered = {name.lower(): name for name in names}
    folders: dict[str, frozenset[str]] = {}
    for folder in LOOKED_INTO:
        real = lowered.get(folder)
        if real is None or os.path.islink(root / real) or not (root / real).is_dir():
            continue
        inside = _names(root / real)
        if inside is not None:
            folders[folder] = frozenset(n.lower() for n in inside)
    heads: dict[str, str] = {}
    wanted = [C.INDEX_FILENAME.lower(), "user.md"]
    topics = sorted(
        n for n in lowered if n.endswith(".md") and n not in (C.INDEX_FILENAME.lower(), "user.md")
    )
    for name in [*wanted, *topics[:MAX_SAMPLED_TOPICS]]:
        real = lowered.get(name)
        if real is None or os.path.islink(root / real):
            continue
        if name in wanted:
            heads[name] = _head(root / real, INDEX_HEAD_LINES, INDEX_HEAD_BYTES)
        else:
            heads[name] = _head(root / real)
    return Listing(frozenset(lowered), folders, heads)


def recognise_dir(root: Path) -> Recognised | None:
    """Another agent's format the directory ``root`` holds, or None for Claude Code's."""
    return recognise(read_listing(root))


def declined(root: Path, forced: bool = False) -> str | None:
    """The notice for a directory memdir leaves alone, or None to go on: what every face asks
    before it checks or writes ``root``. ``forced``: :data:`FORCE_FLAG` or the setting."""
    if forced:
        return None
    found = recognise_dir(root)
    return None if found is None else notice(found)
