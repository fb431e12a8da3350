"""What every rule is made of: its metadata (:class:`Rule`), the views its check reads, helpers.

A rule is one :class:`Rule` value, defined in its area's module next to the function that checks
it: the code, name and severities the engine applies, the documentation the rule pages render,
and the check itself. A check receives a view of what it reads (one topic file, the index, or
the directory) and the :class:`~memdir.lint.engine.LintContext`, and returns diagnostics of its
own code only; the entry points in :mod:`memdir.lint.rules` call it only when its code is
enabled.
"""

from __future__ import annotations

import functools
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

from memdir.config import RecallMode
from memdir.lint.diagnostic import Diagnostic, Severity
from memdir.model import IndexEntry, Problem, Span, TopicFile

if TYPE_CHECKING:
    from memdir.index import Index, IndexEdit
    from memdir.lint.engine import LintContext
    from memdir.lint.rules.directory import DirectoryMemo, TopicSummary
    from memdir.scan import Skipped

Scope = Literal["index", "topic", "directory"]
Fixability = Literal["safe", "editor", "none"]


_NO_FIELDS: Mapping[str, Problem] = {}


@dataclass(frozen=True, slots=True)
class TopicView:
    """One topic file as the topic rules read it: the parser's problems sorted out once."""

    topic: TopicFile
    #: Every problem kind the parser reported.
    kinds: frozenset[str]
    #: False for binary or unreadable files: they have neither text nor frontmatter, so only
    #: the read rules (MEM112, MEM113) find anything in them.
    usable: bool
    yaml_errors: tuple[Problem, ...]
    #: The ``bad-field`` problem of a frontmatter that is not a mapping (a list, a string).
    not_mapping: Problem | None
    #: The ``bad-field`` problems of single fields, by frontmatter key.
    bad_fields: Mapping[str, Problem]
    #: Whether the frontmatter's fields can be judged: closed, valid YAML, a mapping.
    fields_readable: bool

    @classmethod
    def of(cls, topic: TopicFile) -> TopicView:
        fm = topic.frontmatter
        closed = fm is not None and fm.close_line is not None
        if not topic.problems:  # nearly every file
            return cls(topic, frozenset(), True, (), None, _NO_FIELDS, closed)
        kinds = frozenset(p.kind for p in topic.problems)
        not_mapping: Problem | None = None
        bad_fields: dict[str, Problem] = {}
        if "bad-field" in kinds:
            for problem in topic.problems:
                if problem.kind != "bad-field":
                    continue
                if problem.key is None:
                    not_mapping = not_mapping or problem
                else:
                    bad_fields.setdefault(problem.key, problem)
        yaml_errors = tuple(p for p in topic.problems if p.kind == "yaml-error")
        return cls(
            topic,
            kinds,
            not kinds & {"binary", "unreadable"},
            yaml_errors,
            not_mapping,
            bad_fields,
            closed and not yaml_errors and not_mapping is None,
        )


@dataclass(frozen=True, slots=True)
class IndexView:
    """MEMORY.md as the index rules read it."""

    index: Index
    #: Each entry with its link key (None for a link that is no topic file of this dir).
    links: Sequence[tuple[IndexEntry, str | None]]
    #: What the rules may reuse from the last index checked.
    memo: IndexMemo = field(default_factory=lambda: IndexMemo())


class IndexMemo:
    """What the index rules reuse from one check of MEMORY.md to the next (an edit's).

    A rule that reads the index line by line gives :meth:`by_line` a check of a range of lines;
    after an edit (:attr:`memdir.index.Index.edit`) only the lines it changed are checked, and
    the findings on the other lines are kept, moved with their line when lines were inserted or
    removed above. A rule reading more than its line makes each finding once per input through
    :meth:`made`. A new context (settings, date, project) or an index not parsed from the last
    one checked is checked whole.
    """

    def __init__(self) -> None:
        self._index: Index | None = None
        self._ctx: object = None
        self._edit: IndexEdit | None = None
        #: The index checked last, while the next one is checked.
        self._before: Index | None = None
        self._lines: dict[str, tuple[list[Diagnostic], bool]] = {}
        self._made: dict[tuple[str, int], tuple[object, Diagnostic]] = {}
        self._next_lines: dict[str, tuple[list[Diagnostic], bool]] = {}
        self._next_made: dict[tuple[str, int], tuple[object, Diagnostic]] = {}
        #: By code: what :meth:`by_group` keeps (:data:`_Groups`).
        self._groups: dict[str, _Groups] = {}
        self._next_groups: dict[str, _Groups] = {}
        #: Lines each line rule checked, by code, over the memo's life (tests read it).
        self.checked: Counter[str] = Counter()
        #: Findings :meth:`made` made (not reused), by code.
        self.made_count: Counter[str] = Counter()

    def begin(self, index: Index, ctx: object) -> None:
        """Start a check of ``index``: the edit from the last index checked, if it is one."""
        edit = index.edit
        follows = edit is not None and self._index is not None and edit.previous() is self._index
        self._edit = edit if follows and ctx is self._ctx else None
        self._before = self._index if self._edit is not None else None
        if self._edit is None:
            self._lines, self._made, self._groups = {}, {}, {}
        self._index, self._ctx = index, ctx

    def finish(self) -> None:
        """Keep what this check made, and only that (rules not run drop their findings)."""
        self._lines, self._next_lines = self._next_lines, {}
        self._made, self._next_made = self._next_made, {}
        self._groups, self._next_groups = self._next_groups, {}
        self._before = None

    def by_line(
        self,
        code: str,
        index: Index,
        check: Callable[[int, int], Iterable[Diagnostic]],
        marker: str | None = None,
    ) -> list[Diagnostic]:
        """``code``'s findings in ``index``: ``check(start, stop)`` gives those of lines
        ``start..stop-1`` (in line order, without fixes), from their text alone. A finding that
        spans lines is the one exception: while one exists, or the edit's lines hold ``marker``
        (what starts such a finding), the whole index is checked again."""
        kept = self._lines.get(code)
        edit, previous = self._edit, self._before
        if kept is not None and edit is not None and previous is not None and not kept[1]:
            changed = (
                index.lines[edit.start : edit.new_stop],
                previous.lines[edit.start : edit.old_stop],
            )
            if marker is None or not any(marker in line for part in changed for line in part):
                old = kept[0]
                head = old[: bisect_left(old, edit.start, key=_START)]
                tail = old[bisect_left(old, edit.old_stop, key=_START) :]
                delta = edit.delta
                found = [*head, *check(edit.start, edit.new_stop)]
                found.extend([moved(d, delta) for d in tail] if delta else tail)
                self.checked[code] += edit.new_stop - edit.start
                return self._keep_lines(code, found)
        self.checked[code] += len(index.lines)
        return self._keep_lines(code, list(check(0, len(index.lines))))

    def by_group(
        self,
        code: str,
        index: Index,
        keyed: Callable[[int, int], Iterable[tuple[int, str]]],
        check: Callable[[list[int]], Iterable[Diagnostic]],
    ) -> list[Diagnostic]:
        """``code``'s findings in ``index`` for a rule that relates the lines sharing a key (the
        same link): ``keyed(start, stop)`` gives (line, key) of the keyed lines in that range,
        ``check(lines)`` the findings of one group's lines (in line order), which may read the
        line before each. After an edit that moved no line, only the groups with a line in it
        (or just after it) are checked again."""
        kept = self._groups.get(code)
        edit, before = self._edit, self._before
        if kept is not None and edit is not None and before is not None and not edit.delta:
            keys, groups, found = kept
            touched: set[str] = set()
            # And the line after the edit: a finding may read the line before its own.
            stop = min(edit.new_stop + 1, len(index.lines))
            for line in range(edit.start, stop):
                key = keys.pop(line, None)
                if key is not None:
                    _ungroup(groups, key, line)
                    touched.add(key)
            for line, key in keyed(edit.start, stop):
                keys[line] = key
                _group(groups, key, line)
                touched.add(key)
            for key in touched:
                lines = groups.get(key)
                if isinstance(lines, list):
                    found[key] = list(check(lines))
                else:
                    found.pop(key, None)
            self.checked[code] += stop - edit.start
        else:
            keys = dict(keyed(0, len(index.lines)))
            groups = {}
            for line, key in keys.items():
                _group(groups, key, line)
            found = {
                key: list(check(lines)) for key, lines in groups.items() if isinstance(lines, list)
            }
            self.checked[code] += len(index.lines)
        self._next_groups[code] = (keys, groups, found)
        return sorted((d for group in found.values() for d in group), key=_START)

    def _keep_lines(self, code: str, found: list[Diagnostic]) -> list[Diagnostic]:
        spans = any(d.span.start_line != d.span.end_line for d in found)
        self._next_lines[code] = (found, spans)
        return found

    def made(self, code: str, line: int, key: object, make: Callable[[], Diagnostic]) -> Diagnostic:
        """``make()``, the finding of ``code`` on ``line`` from ``key`` (everything it reads),
        or the one made from an equal key on that line by the last check."""
        cached = self._made.get((code, line))
        if cached is None or cached[0] != key:
            cached = (key, make())
            self.made_count[code] += 1
        self._next_made[(code, line)] = cached
        return cached[1]


_START = attrgetter("span.start_line")
#: Each keyed line's key; each key's line, or its lines in order when it has more than one
#: (most keys have one: no list for them); the findings of each key with more than one.
_Groups = tuple[dict[int, str], dict[str, int | list[int]], dict[str, list[Diagnostic]]]


def _group(groups: dict[str, int | list[int]], key: str, line: int) -> None:
    have = groups.get(key)
    if have is None:
        groups[key] = line
    elif isinstance(have, int):
        groups[key] = sorted((have, line))
    else:
        insort(have, line)


def _ungroup(groups: dict[str, int | list[int]], key: str, line: int) -> None:
    have = groups[key]
    if isinstance(have, int):
        del groups[key]
        return
    have.remove(line)
    if len(have) == 1:
        groups[key] = have[0]


def moved(diagnostic: Diagnostic, delta: int) -> Diagnostic:
    """``diagnostic`` ``delta`` lines further (one without a fix: a fix's edits stay put)."""
    assert diagnostic.fix is None
    span = diagnostic.span
    moved = Span(span.start_line + delta, span.start_col, span.end_line + delta, span.end_col)
    return replace(diagnostic, span=moved)


@dataclass(frozen=True)
class DirectoryView:
    """The directory as the directory rules read it: the index and a summary of every file.

    The derived collections are made on first use: a run of only some rules (the others'
    inputs unchanged) pays only for what those rules read.
    """

    index: Index
    links: Sequence[tuple[IndexEntry, str | None]]
    summaries: Mapping[str, TopicSummary]
    skipped: Iterable[Skipped]
    memo: DirectoryMemo

    @functools.cached_property
    def listed(self) -> Sequence[TopicSummary]:
        """Files the scan lists (candidates for the prefetch window)."""
        return [s for s in self.summaries.values() if s.listed]

    @functools.cached_property
    def usable(self) -> Sequence[TopicSummary]:
        """Listed files that are neither binary nor unreadable."""
        return [s for s in self.listed if s.usable]

    @functools.cached_property
    def linked(self) -> frozenset[str]:
        """The link keys of MEMORY.md's entries."""
        return self.memo.linked(self.index)

    @functools.cached_property
    def skipped_paths(self) -> frozenset[str]:
        return frozenset(skip.rel_path for skip in self.skipped)

    @functools.cached_property
    def folders(self) -> frozenset[str]:
        """The folders the scan walked and found topic files in ("" the memory dir itself)."""
        found = {rel.rpartition("/")[0] for rel in self.summaries}
        if "." not in self.skipped_paths:
            found.add("")
        return frozenset(found)


TopicCheck = Callable[[TopicView, "LintContext"], Iterable[Diagnostic]]
IndexCheck = Callable[[IndexView, "LintContext"], Iterable[Diagnostic]]
DirectoryCheck = Callable[[DirectoryView, "LintContext"], Iterable[Diagnostic]]


@dataclass(frozen=True)
class Rule:
    """One diagnostic code: what the engine applies and what the rule pages say."""

    code: str
    #: Short kebab-case name (SARIF ``name``).
    name: str
    severity: Severity
    #: What the rule reads: MEMORY.md alone, one topic file, or the directory as a whole.
    scope: Scope
    #: What the diagnostic means.
    summary: str
    #: Why it matters to the agent.
    why: str
    #: An example that triggers it, and what fixes it.
    example: str
    remedy: str
    #: ``safe``: ``memdir lint --fix`` applies the fix; ``editor``: a fix is offered as a code
    #: action for a person to accept; ``none``: no automatic fix.
    fixable: Fixability = "none"
    #: The severity in a recall mode where it differs from ``severity`` (path A and path B are
    #: alternatives: a finding about the path not in use is a note).
    severity_by_mode: Mapping[RecallMode, Severity] = field(default_factory=dict)
    #: What a directory check reads, so an incremental run re-runs it only when that changed:
    #: ``index`` (MEMORY.md), ``skipped`` (the paths the scan refused), ``disk`` (anything
    #: else on disk: re-read on a rescan), ``files`` (which files there are) and the
    #: :class:`~memdir.lint.rules.directory.TopicSummary` fields it looks at.
    reads: frozenset[str] = frozenset()
    #: The checks, by what they read: a topic file, MEMORY.md, the directory. A rule of scope
    #: ``topic`` may check MEMORY.md's text too (secrets, encoding).
    topic: TopicCheck | None = field(default=None, repr=False, compare=False)
    index: IndexCheck | None = field(default=None, repr=False, compare=False)
    directory: DirectoryCheck | None = field(default=None, repr=False, compare=False)

    def severity_in(self, recall_mode: RecallMode) -> Severity:
        """The default severity of this rule in ``recall_mode``."""
        return self.severity_by_mode.get(recall_mode, self.severity)


# --- helpers shared by the areas ---------------------------------------------------------------


def offset_span(text: str, start: int, end: int) -> Span:
    """A span from string offsets (lines split on ``\\n``, code-point columns)."""
    start_line = text.count("\n", 0, start)
    start_col = start - (text.rfind("\n", 0, start) + 1)
    end_line = start_line + text.count("\n", start, end)
    end_col = end - (text.rfind("\n", 0, end) + 1)
    return Span(start_line, start_col, end_line, end_col)


def line_span(lines: Sequence[str], line: int) -> Span:
    text = lines[line] if 0 <= line < len(lines) else ""
    return Span(line, 0, line, len(text.rstrip("\r")))


def head_span(text: str) -> Span:
    """The first line of a file, where file-level findings are shown."""
    return Span(0, 0, 0, len(text.split("\n", 1)[0].rstrip("\r")))


def field_span(topic: TopicFile, key: str) -> Span:
    """Where a frontmatter field is shown: its value, else its key, else the opening ``---``."""
    fm = topic.frontmatter
    if fm is not None:
        if key in fm.value_spans and fm.data.get(key) is not None:
            return fm.value_spans[key]
        if key in fm.key_spans:
            return fm.key_spans[key]
        if key == "type" and "metadata.type" in fm.value_spans:
            return fm.value_spans["metadata.type"]
    return Span(0, 0, 0, 3)


def count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"


def or_list(words: Sequence[str]) -> str:
    """``a, b, c or d``."""
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else "".join(words)
