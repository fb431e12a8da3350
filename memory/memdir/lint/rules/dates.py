"""Rules about time (MEM119-MEM121): a relative date in a project memory, a memory nobody has
checked for a long time, a deadline that has passed.

Both judge against ``ctx.today`` (an input of the run, never the clock here) and read the
memory's own dates: ``last_verified`` and ``modified`` where the agent reads them (``metadata``
over the top level), else the file's modification time.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from memdir.agent.index import Fences
from memdir.dates import find_deadlines, find_relative_dates, parse_day, render, resolve
from memdir.fixes import dates as date_fixes
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import Rule, TopicView, head_span, kept_aside
from memdir.model import Span, TopicFile

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext


def written_on(topic: TopicFile) -> dt.date:
    """The day the file was last written: its ``modified`` field, else its mtime (UTC)."""
    day = parse_day(topic.modified)
    if day is not None:
        return day
    return dt.datetime.fromtimestamp(topic.mtime, dt.UTC).date()


def verified_on(topic: TopicFile) -> dt.date | None:
    """``last_verified`` where the agent keeps it (``metadata`` wins), when it is a date."""
    fm = topic.frontmatter
    if fm is None:
        return None
    metadata = fm.data.get("metadata")
    if isinstance(metadata, dict) and date_fixes.VERIFIED_FIELD in metadata:
        return parse_day(metadata[date_fixes.VERIFIED_FIELD])
    return parse_day(fm.data.get(date_fixes.VERIFIED_FIELD))


def _searched_lines(topic: TopicFile) -> Iterator[tuple[int, str]]:
    """The lines a relative date is looked for in: the description's and the body's, outside
    fenced code (an example or a log is quoted as it was)."""
    lines = topic.text.split("\n")
    fm = topic.frontmatter
    if fm is not None and "description" in fm.value_spans and topic.description:
        line = fm.value_spans["description"].start_line
        yield line, lines[line]
    fences = Fences()
    for number in range(topic.body_line, len(lines)):
        if not fences.is_code(lines[number]):
            yield number, lines[number]


#: A Markdown heading, or a line that is only a bold label (``**昨日回顾**``, ``**Tomorrow:**``):
#: a section's name, not a sentence about a day.
_HEADING = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|\*\*[^*\n]+\*\*:?[ \t]*$|__[^_\n]+__:?[ \t]*$)")
#: Quoted text on a line: a title or label cited as written ("Next year" as a flag's name).
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|«[^»\n]*»|「[^」\n]*」|『[^』\n]*』')


def _quoted(line: str, start: int, end: int) -> bool:
    """Whether ``line[start:end]`` lies inside quotes."""
    if not any(mark in line for mark in '"“«「『'):
        return False
    return any(m.start() < start and end < m.end() for m in _QUOTED.finditer(line))


def _prose_lines(topic: TopicFile) -> Iterator[tuple[int, str]]:
    """:func:`_searched_lines` without headings and bold labels (a section named "昨日回顾",
    "yesterday's review", names a part of the file, not a day)."""
    for number, line in _searched_lines(topic):
        if _HEADING.match(line) is None:
            yield number, line


#: Inline code on a line, and a name in code.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def code_names(topic: TopicFile) -> frozenset[str]:
    """The names the file's code uses (fenced blocks and inline code), lower-cased: a word that
    is one (``stats.yesterday``) names a field where prose mentions it, not a day."""
    names: set[str] = set()
    fences = Fences()
    for line in topic.text.split("\n")[topic.body_line :]:
        parts = [line] if fences.is_code(line) else _CODE_SPAN.findall(line)
        for part in parts:
            names.update(name.lower() for name in _NAME.findall(part))
    return frozenset(names)


# --- MEM119 --------------------------------------------------------------------------------------


def _relative_date(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    if topic.type != "project" or not view.usable:
        return []
    anchor: dt.date | None = None
    # The modification time is a poor witness: a clone, checkout or copy sets it to that day.
    stamped = parse_day(topic.modified) is not None
    source = "its `modified` field" if stamped else _MTIME_CAVEAT
    found: list[Diagnostic] = []
    names: frozenset[str] | None = None
    for number, line in _prose_lines(topic):
        for relative in find_relative_dates(line):
            if _quoted(line, relative.start, relative.end):
                continue
            if relative.text.isidentifier():
                names = code_names(topic) if names is None else names
                if relative.text.lower() in names:
                    continue  # a field the code names ("the delta compares with yesterday")
            anchor = anchor or written_on(topic)
            absolute = render(relative, anchor)
            span = Span.on_line(number, relative.start, relative.end)
            fix = date_fixes.replace_relative_date(topic, span, relative.text, absolute, anchor)
            # A plan ("next Friday") whose day is behind us: the agent may still act on it.
            ahead = relative.offset > 0 or (relative.offset == 0 and relative.weekday is not None)
            passed = (
                " — a day already past" if ahead and resolve(relative, anchor) < ctx.today else ""
            )
            found.append(
                ctx.diag(
                    "MEM119",
                    topic.path,
                    topic.rel_path,
                    span,
                    f"relative date “{relative.text}”: the agent reads this memory in later "
                    f"sessions, when it no longer means what it did; write the date itself "
                    f"({absolute} if it was written on {anchor.isoformat()}, {source}){passed}",
                    fix,
                )
            )
    return found


_MTIME_CAVEAT = (
    "the file's modification time; the file has no `modified` field, and a clone or copy "
    "resets that time, so check the day"
)


MEM119 = Rule(
    code="MEM119",
    name="relative-date",
    severity="warning",
    scope="topic",
    summary="A `project` memory says when something happens relative to the day it was written "
    "(*tomorrow*, *next Friday*, *in two weeks*, *明天*, *下周五*, *下个月*, *明日*, *来週の金曜*, "
    "*来月*...). Durations (*for two weeks*, *90 天*), recurring days (*every Friday*) and "
    "expressions in code, headings (a section named *昨日回顾*), quoted titles or labels, and a "
    "word the file's code uses as a name (*compares with yesterday* beside `stats.yesterday`) "
    "are not reported: only running prose.",
    why="Memories are read in later sessions, weeks or months on: *next Friday* then names a day "
    "that has long passed, and the agent cannot tell which. The agent is told to turn relative "
    "dates into absolute ones when it saves a project memory.",
    example="`The freeze starts next Friday.` in a `type: project` memory",
    remedy="Write the date itself. The editor offers the date the expression meant on the "
    "file's last change (its `modified` field, else its modification time), to confirm: a "
    "sentence written earlier than the file's last change meant an earlier date, and a file "
    "without `modified` may carry the day it was cloned or copied (the message says so). Weeks "
    "start on Monday; *next Friday* is the Friday of the following week.",
    fixable="editor",
    preview=True,
    precision="18 of 60 judged findings right (30%) on the real memory dirs of the samples "
    "(2026-12): durations (*doubled in ten days*), a sentence describing what the software "
    "does (*the widget shows today and yesterday*), a date written beside it in another form, "
    "labels and cadences read as dates",
    topic=_relative_date,
)


# --- MEM120 --------------------------------------------------------------------------------------


def _not_verified(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    limit = ctx.verify_after_days
    if limit <= 0 or not view.usable:
        return []
    verified = verified_on(topic)
    # Not the file's mtime: a checkout, copy or sync resets it, so it says nothing about when
    # anyone looked, and a dir without dates of its own would be reported everywhere at once.
    since = verified if verified is not None else parse_day(topic.modified)
    if since is None:
        return []
    days = (ctx.today - since).days
    if days <= limit:
        return []
    fm = topic.frontmatter
    span = head_span(topic.text)
    if fm is not None:
        for key in (f"metadata.{date_fixes.VERIFIED_FIELD}", date_fixes.VERIFIED_FIELD):
            if key in fm.value_spans and verified is not None:
                span = fm.value_spans[key]
                break
    what = (
        f"last verified {since.isoformat()}"
        if verified is not None
        else f"never verified, last changed {since.isoformat()}"
    )
    return [
        ctx.diag(
            "MEM120",
            topic.path,
            topic.rel_path,
            span,
            f"{what}, {days} days ago (more than {limit}): the agent loads this memory as "
            "current without checking it; check what it says against the project, then set "
            f"`{date_fixes.VERIFIED_FIELD}: {ctx.today.isoformat()}` in its frontmatter",
            date_fixes.mark_verified(topic, ctx.today),
        )
    ]


MEM120 = Rule(
    code="MEM120",
    name="not-verified",
    severity="info",
    scope="topic",
    summary="A memory has not been checked for more than `verify_after_days` days (180 by "
    "default; 0 turns the rule off): the date in its frontmatter's `last_verified: YYYY-MM-DD` (or "
    "`metadata.last_verified`, where the agent moves it), else its `modified` stamp (whoever "
    "wrote it had the project in front of them). A memory with neither is not reported: its "
    "file's modification time changes with every checkout or copy, and says nothing about when "
    "anyone looked.",
    why="A months-old memory loads into every session with nothing to say it is still true: the "
    "files, names and decisions it cites may have changed. The agent ignores frontmatter fields "
    "it does not know, so `last_verified` is for people and memdir only; the agent keeps it "
    "when it rewrites the file (moved under `metadata:` on its first write).",
    example="`last_verified: 2025-01-10` a year later",
    remedy="Check what the memory says against the project, fix or delete it, then record the "
    "check: the editor's *Mark verified today* sets `last_verified` (adding it at the end of the "
    "frontmatter when there is none) and leaves every other byte alone.",
    fixable="editor",
    topic=_not_verified,
)

# --- MEM121 --------------------------------------------------------------------------------------

#: Words saying a milestone is reached: a date in the same sentence is when it was due, not a
#: plan still ahead ("ACC support added (by 2026-04-05)").
_DONE = re.compile(
    r"(?i)\b(?:done|complete|completed|shipped|added|released|merged|landed|finished|delivered"
    r"|launched|deployed|closed|resolved)\b|✅|☑|\[x\]|已完成|已上线|已发布|完成了|完了|済み"
)
#: Where a sentence ends (Latin, CJK).
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)|[。；！？]")


def _reported_done(line: str, at: int) -> bool:
    """Whether the sentence around ``line[at]`` says what it dates is done."""
    start = 0
    for match in _SENTENCE_END.finditer(line, 0, at):
        start = match.end()
    end_match = _SENTENCE_END.search(line, at)
    end = end_match.start() if end_match else len(line)
    return _DONE.search(line, start, end) is not None


def _past_deadline(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    # An archived file is history by its place: its deadlines were past when it was put there.
    if topic.type != "project" or not view.usable or kept_aside(topic.rel_path):
        return []
    found: list[Diagnostic] = []
    for number, line in _searched_lines(topic):
        for deadline in find_deadlines(line):
            days = (ctx.today - deadline.day).days
            if days <= 0 or _reported_done(line, deadline.start):
                continue
            found.append(
                ctx.diag(
                    "MEM121",
                    topic.path,
                    topic.rel_path,
                    Span.on_line(number, deadline.start, deadline.end),
                    f"the deadline {deadline.text} passed {days} days ago: the agent still reads "
                    "this memory as a plan; say what happened (done, moved, dropped) or delete "
                    "what no longer holds",
                )
            )
    return found


MEM121 = Rule(
    code="MEM121",
    name="past-deadline",
    severity="info",
    scope="topic",
    summary="A `project` memory states a deadline that has passed: a date after *due*, *deadline*, "
    "*expires*, *shuts down*, *retires*, *ends*, or right after *by* or *until*; *截止*, "
    "*期限*, *到期*, *下线*; *締め切り*, *期限*, *までに* (dates as `2027-03-31`, `2027/03/31` "
    "or `2027年3月31日`).",
    why="Project memories record plans; once the date is behind, the agent still reads the plan as "
    "ahead of it and acts on it (a freeze that ended, an API already shut down).",
    example="`Partners must move off /v1/ by 2026-11-30.` read on 2026-12-03",
    remedy="Say what happened (done, moved to a new date, dropped), or delete what no longer "
    "holds. Dates after words that also date the past (*before*, *之前*, *まで*) are not "
    "reported, nor dates in a sentence that says the work is done (*shipped*, *added*, "
    "*completed*, ✅, *已完成*, *完了*).",
    preview=True,
    precision="12 of 30 judged findings right (40%) on the real memory dirs of the samples "
    "(2026-12): an interval closed in the past (*the flag stayed on until …*), a start date "
    "called a cutoff, *by* naming who found something, a certificate that renews itself read "
    "as deadlines",
    topic=_past_deadline,
)

RULES = (MEM119, MEM120, MEM121)
