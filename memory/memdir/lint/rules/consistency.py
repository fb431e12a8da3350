"""Rules about what memories say, read against each other and against time (MEM125, MEM126),
both in the preview set: two memories that give opposite directives on the same thing, and a
project memory that is a snapshot of one moment (a plan for "the next session", a "current
status") months after that moment.

Both favour precision over recall: MEM125 pairs only directives whose object is written the same
way in both memories ("always use pnpm" / "never use pnpm"); MEM126 reads only markers that
say "this is how things stand right now" and dates the snapshot by the dates written in the
memory, never by a file time alone when the memory has a date of its own (a fresh clone gives
every file today's time).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.agent.index import Fences
from memdir.dates import find_days, find_deadlines, parse_day
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import DirectoryView, Rule, TopicView, kept_aside
from memdir.model import Span, TopicFile

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext


def _lines(topic: TopicFile) -> Iterator[tuple[int, str]]:
    """The description's line and the body's lines outside fenced code."""
    lines = topic.text.split("\n")
    fm = topic.frontmatter
    if fm is not None and "description" in fm.value_spans and topic.description:
        line = fm.value_spans["description"].start_line
        yield line, lines[line]
    fences = Fences()
    for number in range(topic.body_line, len(lines)):
        if not fences.is_code(lines[number]):
            yield number, lines[number]


# --- MEM125 ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Directive:
    """One "always/never do X" a memory states: what it is about, which way, and where."""

    #: The object, normalised: lower case, single spaces, no quotes or backticks.
    subject: str
    positive: bool
    span: Span
    text: str


_CODE_SPAN = re.compile(r"`([^`\n]*)`")
#: The verbs a directive is about, then its object up to the end of the clause.
_VERBS = ("use", "run", "commit", "push", "add", "call", "write", "mock", "install")
_OBJECT = r"\s+(?P<object>[^.;:,!?()\n—–]{2,60})"
_POSITIVE = re.compile(
    r"(?<![\w-])(?:always|must)\s+(?P<verb>" + "|".join(_VERBS) + ")" + _OBJECT, re.IGNORECASE
)
#: The imperative opening a line or a bullet: "- Use pnpm for installs".
_IMPERATIVE = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(?P<verb>"
    + "|".join(v.capitalize() for v in _VERBS)
    + ")"
    + _OBJECT
)
_NEGATIVE = re.compile(
    r"(?<![\w-])(?:never|don'?t|do\s+not|must\s+not|mustn'?t)\s+(?P<verb>"
    + "|".join(_VERBS)
    + ")"
    + _OBJECT,
    re.IGNORECASE,
)
#: An object this long or longer is a sentence, not a thing: no pair is made of it.
_MAX_OBJECT_WORDS = 4
#: Objects that name no thing of their own ("it", "this").
_VAGUE = frozenset({"it", "this", "that", "them", "these", "those", "one", "something", "anything"})
_HINT = re.compile(
    r"(?i:(?<![\w-])(?:always|must|never|don'?t|do\s+not|mustn'?t)\s)|^\s*(?:[-*+]\s+|\d+[.)]\s+)?"
    r"(?:\*\*)?(?:" + "|".join(v.capitalize() for v in _VERBS) + r")\s",
    re.MULTILINE,
)
_WORD = re.compile(r"[\w.+#/@-]+")


def _subject(raw: str) -> str | None:
    words = _WORD.findall(_CODE_SPAN.sub(r"\1", raw).lower())
    while words and words[-1] in {"and", "or", "the", "a", "an"}:
        words.pop()
    if not words or len(words) > _MAX_OBJECT_WORDS or words[0] in _VAGUE:
        return None
    return " ".join(words)


def directives(topic: TopicFile) -> tuple[Directive, ...]:
    """Every "always/must <verb> X" and "never/don't <verb> X" the memory states."""
    if _HINT.search(topic.text) is None:
        return ()  # nearly every file
    found: list[Directive] = []
    for number, line in _lines(topic):
        if _HINT.search(line) is None:
            continue
        for pattern, positive in ((_NEGATIVE, False), (_POSITIVE, True), (_IMPERATIVE, True)):
            for m in pattern.finditer(line):
                if positive and re.search(r"(?:not|n't)\s*$", line[: m.start("verb")]):
                    continue  # "must not use X" is the negative pattern's
                subject = _subject(m.group("object"))
                if subject is not None:
                    verb = m.group("verb").lower()
                    found.append(
                        Directive(
                            f"{verb} {subject}",
                            positive,
                            Span.on_line(number, m.start(), m.end()),
                            m.group().strip(),
                        )
                    )
    return tuple(found)


def _contradictions(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    by_subject: dict[str, dict[bool, list[tuple[str, Directive]]]] = {}
    for summary in view.usable:
        for directive in summary.directives:
            sides = by_subject.setdefault(directive.subject, {True: [], False: []})
            sides[directive.positive].append((summary.rel_path, directive))
    summaries = view.summaries
    for subject in sorted(by_subject):
        sides = by_subject[subject]
        files = {rel for rel, _ in sides[True]} | {rel for rel, _ in sides[False]}
        if not sides[True] or not sides[False] or len(files) < 2:
            continue
        for positive in (True, False):
            for rel, directive in sides[positive]:
                others = sorted({r for r, _ in sides[not positive] if r != rel})
                if not others:
                    continue
                other = next(d for r, d in sides[not positive] if r == others[0])
                yield ctx.diag(
                    "MEM125",
                    summaries[rel].path,
                    rel,
                    directive.span,
                    f"contradicts {others[0]}"
                    f"{f' (and {len(others) - 1} more)' if len(others) > 1 else ''}: "
                    f"“{directive.text}” here, “{other.text}” there; the agent loads both and "
                    "may follow either. Keep the one that holds (say when each applies, if "
                    "both do) and delete the other",
                )


MEM125 = Rule(
    code="MEM125",
    name="contradicting-memories",
    severity="warning",
    scope="directory",
    summary="Two memories give opposite directives about the same thing: one says *always* (or "
    "*must*) *use X*, the other *never* (*don't*, *do not*, *must not*) *use X*, with the same "
    "verb (use, run, commit, push, add, call, write, mock, install) and an object of at most "
    f"{_MAX_OBJECT_WORDS} words written the same way in both. Each side is reported, naming the "
    "other. A memory that says both things itself is not reported.",
    why="The agent loads both memories as true. Claude Code's documentation warns that with "
    "instructions that contradict each other the model may pick one arbitrarily: which one wins "
    "changes from session to session, and a correction recorded later does not override the "
    "rule it was meant to replace.",
    example="`Always use pnpm for installs.` in tooling.md and `Never use pnpm: the lockfile is "
    "npm's.` in ci.md",
    remedy="Keep the directive that holds and delete the other, or say in one memory when each "
    "applies (then write them so they no longer read as opposites).",
    preview=True,
    precision="not measured yet: no finding on the 53 real memory dirs of the dev sample "
    "(2026-12), where 72 directives were read and none opposed across two memories",
    reads=frozenset({"files", "listed", "usable", "directives"}),
    directory=_contradictions,
)


# --- MEM126 ------------------------------------------------------------------------------------

#: A "current status" or a plan for "the next session" this much older than today
#: describes a project that has moved on.
STALE_SNAPSHOT_DAYS = C.STALE_SNAPSHOT_DAYS

#: Words that mark a memory as a snapshot of one moment, anywhere in a line.
_ANYWHERE = re.compile(
    r"(?<![\w-])(?:next\s+session|where\s+(?:we|i)\s+left\s+off|as\s+of\s+(?:today|now|"
    r"this\s+session)|status\s+as\s+of)(?![\w-])"
    r"|下次会话|下次回来|下次回來|下次继续|下次繼續|次回のセッション",
    re.IGNORECASE,
)
#: Words that mark a snapshot only as a heading or a label (``## Current status``,
#: ``**Today:**``), where they title what follows, not in running prose ("no such driver today").
_LABEL = re.compile(
    r"^\s*(?:#{1,6}\s+|[-*]\s+)?(?:\*\*|__)?\s*(?P<word>(?:current|present)\s+(?:status|state)"
    r"|today|tomorrow|tonight|wip|work\s+in\s+progress|当前状态|當前狀態|今日完成|今天完成"
    r"|明天计划|明日计划|現在の状況|現状)(?![\w-])"
    # A screen or section of an app called Today is a name, not a moment.
    r"(?!\s+(?:screen|section|tab|page|view|widget|card|panel|button|feed|route|component)s?\b)"
    r"[^\n]{0,40}?(?:$|:|：|\*\*|\()",
    re.IGNORECASE,
)
#: A plan for the next session that lists what lasts ("Pitfalls to know next session:", "Gotchas
#: for the next session"): reference, not a state.
_LASTING_NOTES = re.compile(
    r"(?<![\w-])(?:caveats?|traps?|gotchas?|pitfalls?|lessons?|to\s+know)(?![\w-])"
    r"[^.\n]{0,30}?next\s+session",
    re.IGNORECASE,
)
#: A status that reports the work closed ("rollout finished", "merged and released",
#: 已并入主线) or itself superseded, with nothing left or current in it: the lasting,
#: dated fact the rule asks for, or history.
_CLOSED = re.compile(
    r"(?<![\w-])(?:complete[d]?|done|landed|resolved|merged|shipped|closed|finished|superseded"
    r"|obsolete|outdated|historical|kept\s+for\s+history)(?![\w-])"
    r"|已完成|已合并|已并入|已上线|完了",
    re.IGNORECASE,
)
_OPEN = re.compile(
    r"(?<![\w-])(?:next|todo|pending|in\s+progress|wip|remaining|left|blocked|waiting|"
    r"not\s+yet|until|active|current|gaps?|missing|ready)(?![\w-])|进行中|待|未|残り|未完",
    re.IGNORECASE,
)


def _days_in(text: str) -> list[dt.date]:
    """The days ``text`` writes out, but for deadlines: a due date is not the snapshot's."""
    due = {deadline.start for deadline in find_deadlines(text)}
    return [day for start, day in find_days(text) if start not in due]


def _snapshot_marker(topic: TopicFile) -> tuple[int, re.Match[str]] | None:
    for number, line in _lines(topic):
        m = _ANYWHERE.search(line) or _LABEL.search(line)
        if m is None or _LASTING_NOTES.search(line):
            continue
        if _closed(line[m.end() :]):
            continue
        return number, m
    return None


def _closed(status: str) -> bool:
    return _CLOSED.search(status) is not None and _OPEN.search(status) is None


def _stale_snapshot(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    # An archived file is history by its place (``archive/``, ``legacy/``).
    if topic.type != "project" or not view.usable or kept_aside(topic.rel_path):
        return []
    marked = _snapshot_marker(topic)
    if marked is None:
        return []
    number, m = marked
    line = topic.text.split("\n")[number]
    # The snapshot's day: a date on its own line, else the newest the memory writes (its
    # `modified` stamp included), else the file's time (which a fresh clone makes today's).
    on_line = [d for d in _days_in(line) if d <= ctx.today]
    written = [d for d in _days_in(topic.text) if d <= ctx.today]
    modified = parse_day(topic.modified)
    if modified is not None:
        written.append(modified)
    if on_line:
        day, how = max(on_line), "dated"
    elif written:
        day, how = max(written), "the newest date in it is"
    else:
        day = dt.datetime.fromtimestamp(topic.mtime, dt.UTC).date()
        how = "the file last changed"
    days = (ctx.today - day).days
    if days <= STALE_SNAPSHOT_DAYS:
        return []
    what = m.group().strip(" #*-_:：(")
    return [
        ctx.diag(
            "MEM126",
            topic.path,
            topic.rel_path,
            Span.on_line(number, m.start(), m.end()),
            f"stale snapshot: “{what}” records how things stood at one moment, and {how} "
            f"{day.isoformat()}, {days} days ago (more than {STALE_SNAPSHOT_DAYS}); the agent "
            "reads it as how things stand now. Rewrite what still holds as lasting facts, "
            "with dates, and delete the rest",
        )
    ]


MEM126 = Rule(
    code="MEM126",
    name="stale-snapshot",
    severity="info",
    scope="topic",
    summary="A `project` memory is a snapshot of one moment, and that moment is more than "
    f"{STALE_SNAPSHOT_DAYS} days old: a plan for *the next session*, *where we left off*, a "
    "*Current status* or *Today* / *Tomorrow* / *WIP* heading or label (*当前状态*, *今日完成*, "
    "*明天计划*, *下次回来*, *現在の状況*...). The moment is the date written on that line, else "
    "the newest date written in the memory (or its `modified` stamp), else the file's "
    "modification time; a deadline (*due 2026-11-30*) is no such date. Not markers: *Today* in "
    'running prose ("no such driver today") or naming a screen (*Today tab*), a status that '
    "reports the work closed with nothing left (*Status as of 2026-04-25: rollout "
    "finished*), notes that last (*Pitfalls to know next session*); a file under an archive "
    "folder is history by its place.",
    why="A session's notes are true for the next session, not for the one a season later: the "
    "agent reads *NEXT SESSION: re-run the import* or *Current status: tests failing* as how "
    "things stand, and acts on a plan that was done, dropped or overtaken months ago.",
    example="`## Current status (2026-03-31)` … `Next session: finish the migration.` read in "
    "December",
    remedy="Rewrite what still holds as lasting facts with their dates (a decision, where "
    "something lives, what is left and why), and delete the session notes; a log of sessions "
    "belongs in the project's history, not in memory the agent loads as current.",
    preview=True,
    precision="94 of 104 judged findings right (90%) on the real memory dirs of the samples "
    "(2026-12): *next session* in a story of past sessions, a screen named *Today* in a list "
    "of screens and a dated summary of finished work still read as snapshots, and a date "
    "elsewhere in the memory (a data range's end, a review date) taken for the snapshot's",
    topic=_stale_snapshot,
)

RULES = (MEM125, MEM126)
