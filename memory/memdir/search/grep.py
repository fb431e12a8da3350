"""Glob and grep over ``/``-separated relative paths: the one engine behind every search.

``memory/search`` (the editor's search of a memory dir) and the extraction agent's read-only
``grep`` / ``glob`` project tools both match paths and lines here, so a glob means the same thing
wherever a user or a model types it.

A user's regular expression never runs where it could freeze its caller: Python's ``re``
backtracks and holds the GIL while it does. A pattern that cannot backtrack (no repetition, no
alternation, short) runs here; any other runs in a child process killed after
:data:`PATTERN_SECONDS` on one file (:mod:`memdir.search.worker`). Same interpreter, same ``re``,
same answers either way; docs/performance.md says why this and not another engine.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from memdir.model import ZERO_BASED
from memdir.search import worker as search_worker
from memdir.search.lines import grep_lines
from memdir.search.worker import SlowPatternError

__all__ = [
    "MAX_MATCH_TEXT",
    "MAX_SEARCH_MATCHES",
    "PATTERN_SECONDS",
    "InvalidPatternError",
    "SearchMatch",
    "SearchResult",
    "SlowPatternError",
    "compile_glob",
    "compile_pattern",
    "glob_matcher",
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
#: Longest glob accepted: its automaton has a few states per character, and a path costs at most
#: its length times that many steps.
MAX_GLOB_CHARS = 256
#: Subsets of automaton states one compiled glob remembers; past it, new ones are recomputed per
#: path (still linear), so a hostile glob cannot grow memory without bound.
_GLOB_CACHE_STATES = 2_000

# Automaton node kinds: the consuming ones take one character (a literal, a ``[...]`` class, any
# but ``/``, anything); ``_SPLIT`` goes on to two nodes without consuming; ``_ACCEPT`` ends.
_LITERAL, _CLASS, _NOT_SLASH, _ANY, _SPLIT, _ACCEPT = range(6)

_Token = tuple[str, object]


class InvalidPatternError(ValueError):
    """A glob or regular expression that does not compile; the message says why."""


def compile_glob(pattern: str) -> Callable[[str], bool]:
    """A test of whole relative paths against a glob.

    ``**/`` spans any number of folders, ``**`` anything, ``*`` and ``?`` stay inside one name,
    ``[...]`` (``!`` negates) and ``{a,b}`` (options are globs) work as in shells. Matching runs a
    small automaton over the path, never a backtracking search, so it takes time linear in the
    path whatever the glob.
    """
    if len(pattern) > MAX_GLOB_CHARS:
        raise InvalidPatternError(f"the glob is longer than {MAX_GLOB_CHARS} characters")
    try:
        tokens = _glob_tokens(pattern)
    except re.error as exc:
        raise InvalidPatternError(f"invalid glob {pattern!r}: {exc}") from None
    return _Glob(tokens).matches


def glob_matcher(glob: str) -> Callable[[str], bool]:
    """A test of relative paths; a glob without ``/`` matches the file name in any folder."""
    matches = compile_glob(glob)
    if "/" in glob:
        return matches
    return lambda rel: matches(rel.rsplit("/", 1)[-1])


def _glob_tokens(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            tokens.append(("dirs", None))
            i += 3
            continue
        if pattern.startswith("**", i):
            tokens.append(("any*", None))
            i += 2
            continue
        char = pattern[i]
        end = _class_end(pattern, i) if char == "[" else -1
        if char == "*":
            tokens.append(("name*", None))
        elif char == "?":
            tokens.append(("name?", None))
        elif end > 0:
            body = pattern[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            # The class keeps ``re``'s meaning of ranges and negation for one character.
            tokens.append(("class", re.compile(f"[{body.replace(chr(92), chr(92) * 2)}]")))
            i = end
        elif char == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            options = pattern[i + 1 : end].split(",")
            tokens.append(("alt", [_glob_tokens(option) for option in options]))
            i = end
        else:
            tokens.append(("literal", char))
        i += 1
    return tokens


def _class_end(pattern: str, start: int) -> int:
    """Where the ``[...]`` opened at ``start`` closes, or -1 (then ``[`` is a literal): a ``]``
    first in the class (after ``!`` or ``^``) is a member, as in shells."""
    first = start + 2 if pattern[start + 1 : start + 2] in ("!", "^") else start + 1
    return pattern.find("]", first + 1)


class _Glob:
    """A glob as a Thompson automaton, run as a lazily built DFA over the path's characters."""

    def __init__(self, tokens: list[_Token]) -> None:
        self._kind: list[int] = []
        self._arg: list[Any] = []
        self._out: list[int] = []
        self._alt: list[int] = []
        start = self._build(tokens, self._node(_ACCEPT))
        self._lock = threading.Lock()
        self._sets: list[frozenset[int]] = []
        self._ids: dict[frozenset[int], int] = {}
        self._moves: list[dict[str, int]] = []
        self._accepting: list[bool] = []
        self._start = self._intern(self._closure([start]))
        self._dead = self._intern(frozenset())

    def _node(self, kind: int, arg: object = None, out: int = -1, alt: int = -1) -> int:
        self._kind.append(kind)
        self._arg.append(arg)
        self._out.append(out)
        self._alt.append(alt)
        return len(self._kind) - 1

    def _loop(self, kind: int, then: int) -> int:
        """``kind`` zero or more times, then ``then``."""
        split = self._node(_SPLIT, alt=then)
        self._out[split] = self._node(kind, out=split)
        return split

    def _build(self, tokens: list[_Token], then: int) -> int:
        """The node that matches ``tokens`` followed by whatever ``then`` matches."""
        for kind, arg in reversed(tokens):
            if kind == "literal":
                then = self._node(_LITERAL, arg, then)
            elif kind == "class":
                then = self._node(_CLASS, arg, then)
            elif kind == "name?":
                then = self._node(_NOT_SLASH, out=then)
            elif kind == "name*":
                then = self._loop(_NOT_SLASH, then)
            elif kind == "any*":
                then = self._loop(_ANY, then)
            elif kind == "dirs":  # nothing, or anything ending in "/"
                folders = self._loop(_ANY, self._node(_LITERAL, "/", then))
                then = self._node(_SPLIT, out=folders, alt=then)
            else:
                options = [self._build(option, then) for option in cast(list[list[_Token]], arg)]
                then = options[-1]
                for option in reversed(options[:-1]):
                    then = self._node(_SPLIT, out=option, alt=then)
        return then

    def _closure(self, nodes: Iterable[int]) -> frozenset[int]:
        """The consuming and accepting nodes reachable from ``nodes`` without consuming."""
        seen: set[int] = set()
        found: set[int] = set()
        stack = list(nodes)
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if self._kind[node] == _SPLIT:
                stack += (self._out[node], self._alt[node])
            else:
                found.add(node)
        return frozenset(found)

    def _step(self, nodes: frozenset[int], char: str) -> frozenset[int]:
        kind, arg, out = self._kind, self._arg, self._out
        return self._closure(
            out[node]
            for node in nodes
            if (k := kind[node]) == _ANY
            or (k == _NOT_SLASH and char != "/")
            or (k == _LITERAL and char == arg[node])
            or (k == _CLASS and arg[node].match(char) is not None)
        )

    def _intern(self, nodes: frozenset[int]) -> int:
        """The DFA state of ``nodes``, or -1 when the cache is full."""
        with self._lock:
            known = self._ids.get(nodes)
            if known is not None or len(self._sets) >= _GLOB_CACHE_STATES:
                return -1 if known is None else known
            self._ids[nodes] = len(self._sets)
            self._sets.append(nodes)
            self._moves.append({})
            self._accepting.append(any(self._kind[node] == _ACCEPT for node in nodes))
            return len(self._sets) - 1

    def matches(self, path: str) -> bool:
        state, moves, dead = self._start, self._moves, self._dead
        for index, char in enumerate(path):
            following = moves[state].get(char)
            if following is None:
                nodes = self._step(self._sets[state], char)
                following = self._intern(nodes)
                if following < 0:  # the cache is full: go on without it
                    return self._matches_uncached(nodes, path[index + 1 :])
                moves[state][char] = following
            if following == dead:
                return False
            state = following
        return self._accepting[state]

    def _matches_uncached(self, nodes: frozenset[int], rest: str) -> bool:
        for char in rest:
            if not nodes:
                return False
            nodes = self._step(nodes, char)
        return any(self._kind[node] == _ACCEPT for node in nodes)


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


@dataclass(frozen=True)
class SearchMatch:
    """One matching line."""

    #: Relative to the memory dir, ``/``-separated.
    path: str
    #: The line, 0-based as LSP counts (the CLI and MCP show it 1-based).
    line: int = field(metadata=ZERO_BASED)
    #: Where the first match starts: a 0-based column in characters (code points; the CLI and
    #: MCP show it 1-based).
    character: int = field(metadata=ZERO_BASED)
    #: The line, cut at 400 characters.
    text: str

    def grep_line(self, path: str | None = None) -> str:
        """``path:line:column: text``, 1-based as grep prints it (``path``: as the reader names
        the file; default, relative to the memory dir)."""
        return f"{path or self.path}:{self.line + 1}:{self.character + 1}: {self.text}"


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
    from memdir.agent.scan import scan
    from memdir.constants import INDEX_FILENAME
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
