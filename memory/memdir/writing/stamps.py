"""The ``modified`` stamp: a write to a topic file that has frontmatter sets its ``modified``
field to the current UTC time with milliseconds, where the agent keeps it (``metadata.modified``
in a file the agent wrote), as the agent does."""

from __future__ import annotations

import datetime as dt
import re

from memdir.agent.topic import parse_frontmatter


def _now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def format_modified(moment: dt.datetime) -> str:
    """``2026-07-15T09:12:00.000Z``: UTC with milliseconds, as the agent stamps ``modified``
    (JavaScript's ``Date.prototype.toISOString``)."""
    utc = moment.astimezone(dt.UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def has_frontmatter(text: str) -> bool:
    """True when ``text`` opens with a closed frontmatter block whose YAML is a mapping."""
    fm, problems = parse_frontmatter(text.split("\n"))
    return fm is not None and fm.close_line is not None and not problems


#: A ``modified`` key at any indentation, and the lines that belong to the block above them
#: (the agent's own patterns for placing its stamp).
_MODIFIED_LINE = re.compile(r"^(\s*)modified\s*:(.*)$", re.DOTALL)
_METADATA_HEADER = re.compile(r"^metadata:\s*(#.*)?$")
_INDENTED = re.compile(r"^\s+\S")
_BLANK_OR_COMMENT = re.compile(r"^\s*(#|$)")


def _metadata_end(lines: list[str], header: int, close: int) -> int:
    """The line after the ``metadata:`` block starting at ``header`` (blank and comment lines
    inside it belong to it when an indented line follows them)."""
    end = header + 1
    while end < close:
        if _INDENTED.match(lines[end].removesuffix("\r")):
            end += 1
            continue
        after = end
        while after < close and _BLANK_OR_COMMENT.match(lines[after].removesuffix("\r")):
            after += 1
        if after == end or after >= close or not _INDENTED.match(lines[after].removesuffix("\r")):
            break
        end = after
    return end


def _without_modified(data: dict[str, object]) -> dict[str, object]:
    return {
        key: {k: v for k, v in value.items() if k != "modified"}
        if isinstance(value, dict)
        else value
        for key, value in data.items()
        if key != "modified"
    }


def stamp_modified(text: str, stamp: str) -> tuple[str, int | None]:
    """Set the ``modified`` field of ``text``'s frontmatter to ``stamp``, where the agent keeps it.

    As the agent's Write tool does: the one ``modified:`` line of the block is updated in place
    at its indentation (``metadata.modified`` in a file the agent wrote, or a top-level one),
    keeping a trailing comment; without one, the field is added at the end of a ``metadata:``
    block, or before the closing ``---`` when there is none. Returns the new text and the
    0-based line that was inserted (None when a value was replaced or nothing changed). Text
    without a well-formed frontmatter is returned unchanged, and so is any text where the edit
    would be ambiguous (two ``modified`` lines, an inline ``metadata`` mapping) or would not
    read back exactly: the stamp is never worth corrupting a memory for.
    """
    lines = text.split("\n")
    fm, problems = parse_frontmatter(lines)
    if fm is None or fm.close_line is None or problems:
        return text, None
    close = fm.close_line
    eol = "\r" if lines[0].endswith("\r") else ""
    found = [i for i in range(1, close) if _MODIFIED_LINE.match(lines[i].removesuffix("\r"))]
    inserted: int | None = None
    if len(found) > 1:
        return text, None
    if found:
        number = found[0]
        match = _MODIFIED_LINE.match(lines[number].removesuffix("\r"))
        assert match is not None
        indent, rest = match.groups()
        if rest.strip().startswith(("|", ">")) or not rest.strip():
            return text, None
        comment = re.search(r"[ \t]+#.*$", rest)
        keep = comment.group() if comment and not rest.lstrip().startswith(("'", '"')) else ""
        lines[number] = f"{indent}modified: {stamp}{keep}{eol}"
    else:
        headers = [i for i in range(1, close) if lines[i].startswith("metadata:")]
        blocks = [i for i in headers if _METADATA_HEADER.match(lines[i].removesuffix("\r"))]
        if headers and not blocks:
            return text, None  # an inline mapping: no faithful place for the line
        if blocks:
            inserted = _metadata_end(lines, blocks[0], close)
            children = (
                line.removesuffix("\r")
                for line in lines[blocks[0] + 1 : inserted]
                if _INDENTED.match(line) and not _BLANK_OR_COMMENT.match(line.removesuffix("\r"))
            )
            first = next(children, "  ")
            indent = first[: len(first) - len(first.lstrip())]
        else:
            inserted, indent = close, ""
        lines.insert(inserted, f"{indent}modified: {stamp}{eol}")
    new_text = "\n".join(lines)
    new_fm, new_problems = parse_frontmatter(new_text.split("\n"))
    if new_fm is None or new_problems:
        return text, None
    written = [new_fm.data.get("modified")] + [
        value.get("modified") for value in new_fm.data.values() if isinstance(value, dict)
    ]
    stamps = [format_modified(w) if isinstance(w, dt.datetime) else w for w in written]
    if _without_modified(fm.data) != _without_modified(new_fm.data) or stamp not in stamps:
        return text, None
    return new_text, inserted
