"""The lint rules and their registry: every code, its metadata and its check, in one list.

Each area module defines its rules (a :class:`~memdir.lint.rules.base.Rule` beside the function
that checks it) and lists them in its ``RULES``; :data:`RULES` here gathers them, and the entry
points run whatever the registry holds, so a rule added to an area's list reaches every path:

* :func:`check_topic`: the rules that read one topic file (``scope="topic"``), however the file
  arrived (disk or editor);
* :func:`check_index`: the rules that read MEMORY.md (``scope="index"``);
* :func:`check_directory`: the rules that read the index with a :class:`TopicSummary` of every
  topic file (``scope="directory"``), and MEM122 (an interrupted write).

Every message says why the finding matters to the agent.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from memdir.agent.index import Index
from memdir.agent.scan import Skipped
from memdir.config import Settings
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules import (
    citations,
    consistency,
    content,
    descriptions,
    directory,
    frontmatter,
    instructions,
)
from memdir.lint.rules import dates as date_rules
from memdir.lint.rules import index as index_rules
from memdir.lint.rules import writes as write_rules
from memdir.lint.rules.base import DirectoryView, IndexView, Rule, TopicView, kept_aside
from memdir.lint.rules.directory import TopicSummary, summarize
from memdir.lint.rules.index import entry_links
from memdir.model import IndexEntry, TopicFile

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext

__all__ = [
    "ALL_CODES",
    "PREVIEW_CODES",
    "RULES",
    "Rule",
    "TopicSummary",
    "check_directory",
    "check_index",
    "check_topic",
    "directory_rules_reading",
    "entry_links",
    "expand_codes",
    "preview_selections_ignored",
    "rule_enabled",
    "run_directory_rules",
    "summarize",
    "unknown_codes",
]


def _gather(*areas: Iterable[Rule]) -> dict[str, Rule]:
    rules = sorted(itertools.chain(*areas), key=lambda rule: rule.code)
    registry = {rule.code: rule for rule in rules}
    if len(registry) != len(rules):
        raise RuntimeError("two rules share a code")
    return registry


#: Every rule, by code, in code order. Codes are stable: a code never changes meaning, and new
#: codes are added at the end of their family (MEM0xx the index, MEM1xx topic files).
RULES: dict[str, Rule] = _gather(
    index_rules.RULES,
    frontmatter.RULES,
    descriptions.RULES,
    content.RULES,
    directory.RULES,
    citations.RULES,
    date_rules.RULES,
    write_rules.RULES,
    consistency.RULES,
    instructions.RULES,
)
ALL_CODES: tuple[str, ...] = tuple(RULES)
_TOPIC = tuple((rule.code, rule.topic) for rule in RULES.values() if rule.topic is not None)
_INDEX = tuple((rule.code, rule.index) for rule in RULES.values() if rule.index is not None)
_DIRECTORY = tuple(
    (rule.code, rule.directory) for rule in RULES.values() if rule.directory is not None
)
if any(not RULES[code].reads for code, _ in _DIRECTORY):
    raise RuntimeError("a directory rule does not say what it reads (Rule.reads)")
if any(rule.preview and not rule.precision for rule in RULES.values()):
    raise RuntimeError("a preview rule does not say its measured precision (Rule.precision)")
#: The rules off unless preview is on.
PREVIEW_CODES: frozenset[str] = frozenset(code for code, rule in RULES.items() if rule.preview)


def rule_enabled(settings: Settings, code: str) -> bool:
    """Whether ``code`` runs under ``settings``: selected, not ignored or off, and, for a
    preview rule, with preview on (selecting a preview rule does not turn preview on, as in
    ruff: :func:`preview_selections_ignored` names such selections for a warning)."""
    return settings.code_enabled(code) and (settings.preview or code not in PREVIEW_CODES)


def preview_selections_ignored(settings: Settings) -> list[str]:
    """Preview codes ``select`` names exactly while preview is off: they stay off, and the
    person who asked for them should be told so. A prefix (``MEM1``) selects the preview
    rules it covers only with preview on, silently, as ruff's prefixes do."""
    if settings.preview:
        return []
    return [code for code in dict.fromkeys(settings.select) if code in PREVIEW_CODES]


def expand_codes(patterns: tuple[str, ...] | list[str]) -> set[str]:
    """The codes a list of codes or prefixes (``MEM1``) names; unknown entries name none."""
    selected: set[str] = set()
    for pattern in patterns:
        selected.update(code for code in ALL_CODES if code.startswith(pattern))
    return selected


def unknown_codes(patterns: tuple[str, ...] | list[str]) -> list[str]:
    """Entries of ``patterns`` that match no code (for a usage error)."""
    return [p for p in patterns if not any(code.startswith(p) for code in ALL_CODES)]


#: The rules that model auto memory's loading and recall: not run on a directory read by the
#: project's instructions (the engine), nor on a memory kept for history (here).
AUTO_MEMORY_CODES: frozenset[str] = frozenset(
    code for code, rule in RULES.items() if rule.auto_memory_only
)


def check_topic(topic: TopicFile, ctx: LintContext) -> list[Diagnostic]:
    """Every enabled rule that reads one topic file (for a file kept for history, the rules
    that hold however it is read)."""
    view = TopicView.of(topic)
    found: list[Diagnostic] = []
    enabled = ctx.enabled
    if kept_aside(topic.rel_path):
        enabled = enabled - AUTO_MEMORY_CODES
    for code, check in _TOPIC:
        if code in enabled:
            found.extend(check(view, ctx))
    return found


def check_index(
    index: Index,
    ctx: LintContext,
    links: Sequence[tuple[IndexEntry, str | None]] | None = None,
) -> list[Diagnostic]:
    """Every enabled rule that reads MEMORY.md alone (plus secrets and encoding of its text).

    ``links``: :func:`entry_links` of this index, when the caller has it (the directory rules
    read it too).
    """
    view = IndexView(index, links if links is not None else entry_links(index.entries))
    found: list[Diagnostic] = []
    for code, check in _INDEX:
        if code in ctx.enabled:
            found.extend(check(view, ctx))
    return found


def check_directory(
    index: Index,
    summaries: Mapping[str, TopicSummary],
    skipped: Iterable[Skipped],
    ctx: LintContext,
) -> list[Diagnostic]:
    """Every enabled rule that reads the directory as a whole."""
    found = run_directory_rules(index, entry_links(index.entries), summaries, skipped, ctx)
    return list(itertools.chain.from_iterable(found.values()))


def directory_rules_reading(inputs: Collection[str]) -> list[str]:
    """The directory rules that read any of ``inputs`` (see :attr:`Rule.reads`)."""
    return [code for code, _ in _DIRECTORY if not RULES[code].reads.isdisjoint(inputs)]


@functools.lru_cache(maxsize=16)
def fields_read(enabled: frozenset[str]) -> frozenset[str]:
    """Everything the enabled directory rules read (their :attr:`Rule.reads`): a summary field
    none of them reads need not be computed."""
    return frozenset().union(*(RULES[code].reads for code, _ in _DIRECTORY if code in enabled))


def run_directory_rules(
    index: Index,
    links: Sequence[tuple[IndexEntry, str | None]],
    summaries: Mapping[str, TopicSummary],
    skipped: Iterable[Skipped],
    ctx: LintContext,
    codes: Collection[str] | None = None,
) -> dict[str, list[Diagnostic]]:
    """The findings of the enabled directory rules in ``codes`` (None: all), by code: the
    engine passes the rules whose inputs changed and keeps the others' findings."""
    view = DirectoryView(index, links, summaries, skipped)
    found: dict[str, list[Diagnostic]] = {}
    for code, check in _DIRECTORY:
        if (codes is None or code in codes) and code in ctx.enabled:
            found[code] = [
                diagnostic
                for diagnostic in check(view, ctx)
                if code not in AUTO_MEMORY_CODES or not kept_aside(diagnostic.rel_path)
            ]
    return found
