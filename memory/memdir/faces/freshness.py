"""What the editor says about a memory's freshness: when it was verified, and what the project
says of the paths and identifiers it cites.

Pure functions over a :class:`~memdir.model.TopicFile`, a :class:`~memdir.project.lookup.Project`,
the day and the settings; the language server's hover shows their text. They judge exactly as the
rules do (MEM117, MEM118, MEM120): the same extraction, lookups and dates, imported, not copied.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING

from memdir.fixes.dates import VERIFIED_FIELD
from memdir.lint.rules.citations import missing_path
from memdir.lint.rules.dates import verified_on, written_on
from memdir.project.citations import Citation, extract_citations

if TYPE_CHECKING:
    from memdir.model import TopicFile
    from memdir.project.lookup import Project


def _ago(day: dt.date, today: dt.date) -> str:
    days = (today - day).days
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days > 1:
        return f"{days} days ago"
    return "tomorrow" if days == -1 else f"in {-days} days"


def verification_text(topic: TopicFile, today: dt.date, verify_after_days: int) -> str:
    """``Last verified 2026-06-01 (185 days ago); due again 2026-11-28 (verify_after_days =
    180)``, or ``Never verified; modified …`` for a memory without ``last_verified``."""
    verified = verified_on(topic)
    setting = f"verify_after_days = {verify_after_days}"
    if verified is not None:
        head = f"Last verified {verified.isoformat()} ({_ago(verified, today)})"
        since = verified
    else:
        since = written_on(topic)
        head = f"Never verified (no `{VERIFIED_FIELD}`); modified {since.isoformat()} " + (
            f"({_ago(since, today)})"
        )
    if verify_after_days <= 0:
        return f"{head}; not checked for age ({setting})"
    due = since + dt.timedelta(days=verify_after_days)
    if verified is None and topic.modified is None:
        # MEM120 ignores a file's mtime (a checkout resets it): no due date to promise.
        return f"{head}; never reported as unverified ({setting}, no `modified` stamp)"
    when = "due again" if due >= today else "overdue since"
    return f"{head}; {when} {due.isoformat()} ({setting})"


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    if line >= len(lines):
        return len(text)
    return sum(len(part) + 1 for part in lines[:line]) + min(col, len(lines[line]))


def citation_at(topic: TopicFile, line: int, col: int) -> Citation | None:
    """The path or identifier the body cites at (line, code-point column), if any."""
    start = _offset(topic.text, topic.body_line, 0) if topic.frontmatter is not None else 0
    at = _offset(topic.text, line, col)
    if at < start:
        return None
    for citation in extract_citations(topic.text, start):
        if citation.start <= at <= citation.end:
            return citation
    return None


def citation_text(project: Project, topic: TopicFile, citation: Citation) -> str:
    """What the project says of one citation: exists, renamed (per git), gone, found or not."""
    cited = f"`{citation.text}`"
    if not project.complete:
        return f"{cited}: not checked (the project's file list is partial: too many files)"
    if citation.kind == "path":
        target = citation.target.rstrip("/")
        if os.path.lexists(topic.path.parent / target) or project.in_memory_dir(target):
            return f"{cited}: a file of the memory dir (not checked against the project)"
        found = missing_path(project, citation.target)
        missing, renamed, deleted = found.missing, found.renamed, found.deleted
        if not missing:
            if project.exists(target):
                return f"{cited} exists in the project"
            if project.has_suffix(target):
                return f"{cited} exists in the project (the end of a longer path)"
            return f"{cited} exists on disk (a file git does not list)"
        if renamed is not None:
            return f"{cited} is gone: git shows it was renamed to `{renamed}`"
        if deleted:
            return f"{cited} is gone: git shows it was deleted"
        return f"{cited} is not in the project"
    if topic.type == "reference":
        return f"{cited}: not checked (a reference memory names things in other systems)"
    if citation.qualifier is not None and not project.has_word(citation.qualifier):
        return (
            f"{cited}: not checked (`{citation.qualifier}` is not in the project: it likely "
            "names another system)"
        )
    if project.has_word(citation.target):
        return f"`{citation.target}` appears in the project"
    return f"`{citation.target}` appears nowhere in the project"
