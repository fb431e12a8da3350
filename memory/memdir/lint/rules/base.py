"""What every rule is made of: its metadata (:class:`Rule`), the views its check reads, helpers.

A rule is one :class:`Rule` value, defined in its area's module next to the function that checks
it: the code, name and severities the engine applies, the documentation the rule pages render,
and the check itself. A check receives a view of what it reads (one topic file, the index, or
the directory) and the :class:`~memdir.lint.engine.LintContext`, and returns diagnostics of its
own code only: a pure function of what it reads, so the same view always gives the same
findings. What to run again after a change is not the rule's business: the engine
(:class:`memdir.lint.state.DirState`) keeps each file's findings until that file changes and
runs a directory rule again only when what it reads (:attr:`Rule.reads`) changed.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from memdir import constants as C
from memdir.config import RecallMode
from memdir.lint.diagnostic import Diagnostic, Severity
from memdir.model import IndexEntry, Problem, Span, TopicFile

if TYPE_CHECKING:
    from memdir.agent.index import Index
    from memdir.agent.scan import Skipped
    from memdir.lint.engine import LintContext
    from memdir.lint.rules.directory import TopicSummary

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
        return frozenset(key for _, key in self.links if key is not None)

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


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One diagnostic code: what the engine applies and what the rule pages say.

    Made with keyword arguments only: a rule's fields are many, and mostly strings.
    """

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
    #: For a ``safe`` rule whose fix is safe only sometimes: when (the rest of the time the
    #: editor offers it for a person to accept). The rule page says so.
    safe_when: str = ""
    #: The severity in a recall mode where it differs from ``severity`` (path A and path B are
    #: alternatives: a finding about the path not in use is a note).
    severity_by_mode: Mapping[RecallMode, Severity] = field(default_factory=dict)
    #: What a directory check reads, so the engine runs it again only when that changed:
    #: ``index`` (MEMORY.md), ``skipped`` (the paths the scan refused), ``disk`` (anything
    #: else on disk: re-read on a rescan), ``files`` (which files there are) and the
    #: :class:`~memdir.lint.rules.directory.TopicSummary` fields it looks at. Required of
    #: every directory rule (the registry refuses one without).
    reads: frozenset[str] = frozenset()
    #: The checks, by what they read: a topic file, MEMORY.md, the directory. A rule of scope
    #: ``topic`` may check MEMORY.md's text too (secrets, encoding).
    topic: TopicCheck | None = field(default=None, repr=False, compare=False)
    index: IndexCheck | None = field(default=None, repr=False, compare=False)
    directory: DirectoryCheck | None = field(default=None, repr=False, compare=False)
    #: A preview rule is off unless preview is on (``preview = true``, ``--preview``, the
    #: editor's ``memdir.preview``), as ruff's preview rules are: a rule that is not yet right
    #: often enough on real memory dirs to be on by default. Moving a rule in or out of the
    #: preview set is this one field.
    preview: bool = False
    #: How often its findings were right on real memory dirs, as measured (required of a
    #: preview rule, shown on its page): ``"9 of 28 findings right on 53 real memory dirs
    #: (2026-12)"``.
    precision: str = ""
    #: Why the rule models how Claude Code loads its auto memory (the index injected up to a
    #: cap, the prefetch's heads and manifest), one line; set: the rule is not run on a
    #: directory the agent reads on the project's instructions, with its tools, whole
    #: (:mod:`memdir.agent.instructions`). Empty: it holds however the directory is read.
    auto_memory_only: str = ""

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


#: A file named for a day (``2026-03-13.md``, ``2026-03-13-kickoff.md``): a session log.
_DATED_NAME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[-_ ].*)?")


def named_as_no_memory(rel_path: str) -> bool:
    """A file named in capitals (``README.md``, ``RESTORE.md``), by convention a document for
    people, or named for a day (``2026-03-13.md``), a session log, kept beside the memories.
    Without memory frontmatter it is neither a memory missing its frontmatter (MEM101) nor one
    missing from the index (MEM107)."""
    stem = posixpath.splitext(posixpath.basename(rel_path))[0]
    return stem.isupper() or _DATED_NAME.fullmatch(stem) is not None


def kept_aside(rel_path: str) -> bool:
    """A file under a folder the memory dir keeps aside, by the folder's first word
    (:data:`C.ASIDE_FOLDERS`: an archive, ``legacy/``, ``_archived/``, ``drafts/``, or a copy
    of Claude Code's ``commands/``): kept for history, being drafted or config, out of the
    index on purpose. The rules that tune auto memory's loading and recall
    (``Rule.auto_memory_only``) do not serve it, nor do the duplicate rules (a copy kept as
    history is no duplicate) and the rules about time passing (a stale snapshot, a past
    deadline); the rest (secrets, relative dates, broken YAML) still hold."""
    folders = rel_path.split("/")[:-1]
    return any(
        _FIRST_WORD.split(folder.lstrip("_.").casefold(), 1)[0] in C.ASIDE_FOLDERS
        for folder in folders
    )


#: A folder is named by its first word: ``_archive_2025/``, ``old-notes/``.
_FIRST_WORD = re.compile(r"[-_ .]")


def index_in_other_case(rel_path: str) -> bool:
    """``memory.md`` (or ``Memory.md``) at the top of the dir: the index under a name that only
    a case-insensitive file system takes for MEMORY.md (MEM123 reports the name). It is no
    memory missing frontmatter (MEM101), and the files it links are no orphans until it is
    renamed (MEM107)."""
    return rel_path != C.INDEX_FILENAME and rel_path.casefold() == C.INDEX_FILENAME.casefold()


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
