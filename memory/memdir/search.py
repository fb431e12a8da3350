"""Glob and grep over ``/``-separated relative paths: the one engine behind every search.

``memory/search`` (the editor's search of a memory dir) and the extraction agent's read-only
``grep`` / ``glob`` project tools both match paths and lines here, so a glob means the same thing
wherever a user or a model types it.

A user's regular expression never runs where it could freeze its caller: Python's ``re``
backtracks and holds the GIL while it does. A pattern that cannot backtrack (no repetition, no
alternation, short) runs here; any other runs in a child process killed after
:data:`PATTERN_SECONDS` on one file (:mod:`memdir.search_worker`). Same interpreter, same ``re``,
same answers either way; docs/performance.md says why this and not another engine.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir import search_worker
from memdir.search_worker import SlowPatternError

__all__ = [
    "MAX_MATCH_TEXT",
    "MAX_SEARCH_MATCHES",
    "PATTERN_SECONDS",
    "InvalidPatternError",
    "SearchMatch",
    "SearchResult",
    "SlowPatternError",
    "compile_pattern",
    "glob_matcher",
    "glob_regex",
    "grep_lines",
    "search_dir",
    "search_files",
    "search_texts",
]

#: ``search_files`` stops after this many matches (and says so).
MAX_SEARCH_MATCHES = 500
#: Longest line text a match carries.
MAX_MATCH_TEXT = 400
#: A search ends with :class:`SlowPatternError` when one file takes its pattern longer than this.
PATTERN_SECONDS = 2.0
#: Longest pattern accepted (compiling is in-process).
MAX_PATTERN_CHARS = 10_000
#: Longest pattern without repetition or alternation that still runs in-process: each match
#: attempt is then at most this many steps, so a line costs at most this times its length.
_IN_PROCESS_CHARS = 200
#: What lets ``re`` backtrack: quantifiers, alternation, and every ``(?`` construct.
_BACKTRACKING = frozenset("*+?{|")


class InvalidPatternError(ValueError):
    """A glob or regular expression that does not compile; the message says why."""


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over a whole relative path.

    ``**/`` spans any number of folders, ``*`` and ``?`` stay inside one name, ``[...]`` (``!``
    negates) and ``{a,b}`` work as in shells.
    """
    try:
        return re.compile("(?s:" + _glob_body(pattern) + r")\Z")
    except re.error as exc:
        raise InvalidPatternError(f"invalid glob {pattern!r}: {exc}") from None


def _glob_body(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = pattern[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end
        elif char == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_glob_body(o) for o in options) + ")")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def glob_matcher(glob: str) -> Callable[[str], bool]:
    """A test of relative paths; a glob without ``/`` matches the file name in any folder."""
    regex = glob_regex(glob)
    if "/" in glob:
        return lambda rel: regex.match(rel) is not None
    return lambda rel: regex.match(rel.rsplit("/", 1)[-1]) is not None


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """A user's regular expression (Python syntax); match it with :func:`search_files` or
    :func:`search_texts`, which bound its time."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidPatternError(f"the pattern is longer than {MAX_PATTERN_CHARS} characters")
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise InvalidPatternError(str(exc)) from None
    except OverflowError:
        raise InvalidPatternError("a repetition count is too large") from None
    except RecursionError:
        raise InvalidPatternError("the pattern nests too deeply") from None


def grep_lines(
    text: str, regex: re.Pattern[str], *, max_line_chars: int | None = None
) -> Iterator[tuple[int, int, str]]:
    """``(line, column, line text)`` of every line with a match.

    Runs ``regex`` in this process with no time limit: for trusted patterns (user patterns go
    through :func:`search_texts`). Lines are 0-based and split at ``\n`` only, as editors count
    them (a ``\r`` before it is dropped from the text).
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the end of the last line, not a line of its own
    for number, raw in enumerate(lines):
        line = raw[:-1] if raw.endswith("\r") else raw
        found = regex.search(line if max_line_chars is None else line[:max_line_chars])
        if found is not None:
            yield number, found.start(), line


@dataclass(frozen=True)
class SearchMatch:
    """One matching line."""

    #: Relative to the memory dir, ``/``-separated.
    path: str
    #: 0-based line.
    line: int
    #: 0-based column (in characters) where the first match starts.
    character: int
    #: The line, cut at 400 characters.
    text: str


@dataclass(frozen=True)
class SearchResult:
    """The matches of one search, in file order."""

    matches: tuple[SearchMatch, ...]
    #: The search stopped at 500 matches.
    truncated: bool


def search_files(
    paths: Iterable[str],
    read: Callable[[str], str | None],
    regex: re.Pattern[str],
    glob: str = "**/*.md",
    *,
    limit: int = MAX_SEARCH_MATCHES,
    seconds: float = PATTERN_SECONDS,
) -> SearchResult:
    """Grep the files among ``paths`` that match ``glob``; ``read`` gives a file's text or None.

    :class:`SlowPatternError` when one file takes the pattern longer than ``seconds``.
    """
    wanted = glob_matcher(glob)
    texts = ((rel, read(rel)) for rel in paths if wanted(rel))
    return search_texts(
        ((rel, text) for rel, text in texts if text is not None),
        regex,
        limit=limit,
        seconds=seconds,
    )


def search_dir(
    root: Path, regex: re.Pattern[str], glob: str = "**/*.md", *, seconds: float = PATTERN_SECONDS
) -> SearchResult:
    """MEMORY.md and the topic files of the memory dir ``root`` as they are on disk (binary files
    skipped): what ``memdir search`` and the MCP tool search."""
    from memdir.constants import INDEX_FILENAME
    from memdir.scan import scan
    from memdir.textio import read_text

    def read(rel: str) -> str | None:
        result = read_text(root / rel, root=root)
        return None if result.binary else result.text

    paths = [INDEX_FILENAME] if (root / INDEX_FILENAME).is_file() else []
    paths += [handle.rel_path for handle in scan(root).all_files]
    return search_files(paths, read, regex, glob, seconds=seconds)


def search_texts(
    files: Iterable[tuple[str, str]],
    regex: re.Pattern[str],
    *,
    limit: int = MAX_SEARCH_MATCHES,
    seconds: float = PATTERN_SECONDS,
    max_line_chars: int | None = None,
) -> SearchResult:
    """Grep ``(path, text)`` pairs, in order, without ever running a backtracking pattern here
    (``max_line_chars`` as in :func:`grep_lines`)."""
    if len(regex.pattern) <= _IN_PROCESS_CHARS and not _BACKTRACKING.intersection(regex.pattern):
        found: Iterable[tuple[str, Iterable[tuple[int, int, str]]]] = (
            (rel, grep_lines(text, regex, max_line_chars=max_line_chars)) for rel, text in files
        )
    else:
        items = iter(files)
        first = next(items, None)
        if first is None:  # no file: no process
            return SearchResult((), truncated=False)
        found = search_worker.run(
            itertools.chain([first], items),
            regex.pattern,
            regex.flags,
            limit=limit,
            chars=MAX_MATCH_TEXT,
            seconds=seconds,
            max_line_chars=max_line_chars,
        )
    matches: list[SearchMatch] = []
    for rel, lines in found:
        for line, character, line_text in lines:
            if len(matches) >= limit:
                return SearchResult(tuple(matches), truncated=True)
            matches.append(SearchMatch(rel, line, character, line_text[:MAX_MATCH_TEXT]))
    return SearchResult(tuple(matches), truncated=False)
