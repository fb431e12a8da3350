"""The date fixes (MEM119, MEM120): plain :class:`Fix` values, like every other planner's.

Neither is safe: a relative date resolved from the file's modified date is right only when the
sentence was written on that day, and "verified" is a person's claim. The editor offers both
for a person to accept; ``memdir lint --fix`` leaves them alone.
"""

from __future__ import annotations

import datetime as dt
import re

from memdir.fixes.model import Fix, TextEdit
from memdir.model import Span, TopicFile

#: The frontmatter field that records when a person last checked a memory against the project.
VERIFIED_FIELD = "last_verified"
#: A field's value without a trailing comment.
_VALUE = re.compile(r"(?:'[^']*'|\"[^\"]*\"|[^#\s][^#]*?)(?=\s+#|\s*$)")


def replace_relative_date(
    topic: TopicFile, span: Span, expression: str, absolute: str, anchor: dt.date
) -> Fix:
    """Replace ``expression`` at ``span`` with the ``absolute`` text it meant on ``anchor``."""
    edit = TextEdit(topic.path, topic.rel_path, span, absolute)
    title = f"Replace “{expression}” with {absolute} (as written on {anchor.isoformat()})"
    return Fix(title, (edit,))


def mark_verified(topic: TopicFile, today: dt.date) -> Fix | None:
    """Set ``last_verified`` to ``today`` where the agent reads it, else add it at the end of
    the frontmatter; None without a closed frontmatter (nowhere to record it)."""
    fm = topic.frontmatter
    if fm is None or fm.close_line is None:
        return None
    stamp = today.isoformat()
    title = f"Mark verified today ({stamp})"
    metadata = fm.data.get("metadata")
    # The agent moves unknown fields under metadata: on its first write, and reads that one.
    nested = isinstance(metadata, dict) and VERIFIED_FIELD in metadata
    span = fm.value_spans.get(f"metadata.{VERIFIED_FIELD}" if nested else VERIFIED_FIELD)
    if span is not None:
        line = topic.text.split("\n")[span.start_line]
        value = line[span.start_col : span.end_col]
        # Only the old value: a trailing comment stays, and so does everything else.
        kept = _VALUE.match(value)
        end = span.start_col + (kept.end() if kept else len(value))
        new = stamp if line[: span.start_col].endswith((" ", "\t")) else f" {stamp}"
        edit = TextEdit(
            topic.path, topic.rel_path, Span.on_line(span.start_line, span.start_col, end), new
        )
        return Fix(title, (edit,))
    insert = Span(fm.close_line, 0, fm.close_line, 0)
    edit = TextEdit(topic.path, topic.rel_path, insert, f"{VERIFIED_FIELD}: {stamp}\n")
    return Fix(title, (edit,))
