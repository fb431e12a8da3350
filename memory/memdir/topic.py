"""Parsing topic files: the YAML frontmatter (via python-frontmatter) and ``[[name]]`` links.

The block is located in the raw text so every field keeps its exact position (python-frontmatter
strips the text and loses line numbers); its YAML is loaded with python-frontmatter's handler, so
the accepted YAML is the library's. Both shapes of ``type`` are accepted: top-level, or nested as
``metadata: {type: ...}``. Unknown fields are kept and never an error.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from memdir import constants as C
from memdir.model import Frontmatter, MemoryHeader, Problem, Span, TopicFile, WikiLink
from memdir.textio import read_head, read_text

_BOUNDARY = re.compile(r"^-{3,}\s*$")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*:(\s*)(.*?)\s*$")
_NESTED_KEY = re.compile(r"^(\s+)([A-Za-z_][\w.-]*)\s*:(\s*)(.*?)\s*$")
_WIKI_LINK = re.compile(r"\[\[([^\[\]\n|]+?)(?:\|[^\[\]\n]*)?\]\]")
_YAML = YAMLHandler()


def _scalar(value: Any) -> str | None:
    """Frontmatter values as the agent reads them: strings, with YAML's typed scalars restored."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, int | float | dt.date):
        return str(value)
    return None


def parse_frontmatter(lines: list[str]) -> tuple[Frontmatter | None, list[Problem]]:
    """Locate and load the frontmatter block at the top of ``lines``.

    Returns ``(None, [])`` when the text has no frontmatter at all. An opening ``---`` without a
    closing one yields a Frontmatter with ``close_line=None`` and an ``unclosed-frontmatter``
    problem; malformed YAML yields ``yaml-error`` at the parser's position.
    """
    problems: list[Problem] = []
    if not lines or not _BOUNDARY.match(lines[0]):
        return None, problems
    close = next((i for i in range(1, len(lines)) if _BOUNDARY.match(lines[i])), None)
    if close is None:
        problems.append(
            Problem(
                "unclosed-frontmatter",
                "frontmatter opened with --- is never closed",
                Span.on_line(0, 0, len(lines[0])),
            )
        )
        return Frontmatter({}, 0, None), problems

    block = lines[1:close]
    key_spans: dict[str, Span] = {}
    value_spans: dict[str, Span] = {}
    parent: str | None = None
    for offset, line in enumerate(block):
        number = offset + 1
        top = _TOP_KEY.match(line)
        if top:
            key = top.group(1)
            parent = key
            key_spans.setdefault(key, Span.on_line(number, 0, len(key)))
            start = top.start(3)
            value_spans.setdefault(key, Span.on_line(number, start, start + len(top.group(3))))
            continue
        nested = _NESTED_KEY.match(line)
        if nested and parent is not None:
            key = f"{parent}.{nested.group(2)}"
            indent = len(nested.group(1))
            key_spans.setdefault(key, Span.on_line(number, indent, indent + len(nested.group(2))))
            start = nested.start(4)
            value_spans.setdefault(key, Span.on_line(number, start, start + len(nested.group(4))))

    data: dict[str, Any] = {}
    try:
        loaded = _YAML.load("\n".join(block))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        err_line: int = 1 + (mark.line if mark is not None else 0)
        err_line = min(err_line, close - 1) if close > 1 else 1
        err_text = lines[err_line] if err_line < len(lines) else ""
        col: int = min(mark.column if mark is not None else 0, len(err_text))
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        end = len(err_text) if col < len(err_text) else col
        problems.append(
            Problem("yaml-error", f"malformed YAML: {reason}", Span.on_line(err_line, col, end))
        )
    else:
        if isinstance(loaded, dict):
            data = {str(k): v for k, v in loaded.items()}
        elif loaded is not None:
            problems.append(
                Problem(
                    "bad-field",
                    f"frontmatter is a YAML {type(loaded).__name__}, not a mapping of fields",
                    Span(1, 0, max(1, close - 1), 0),
                )
            )
    return Frontmatter(data, 0, close, value_spans, key_spans), problems


def field_values(fm: Frontmatter | None) -> tuple[dict[str, str | None], list[Problem]]:
    """``name``, ``description``, raw ``type`` and ``modified`` as strings, plus shape problems."""
    values: dict[str, str | None] = {"name": None, "description": None, "type": None}
    values["modified"] = None
    problems: list[Problem] = []
    if fm is None:
        return values, problems
    data = fm.data
    for key in ("name", "description", "type", "modified"):
        raw = data.get(key)
        if key == "type" and raw is None:
            metadata = data.get("metadata")
            if isinstance(metadata, dict):
                raw = metadata.get("type")
                key_span = fm.value_spans.get("metadata.type")
            else:
                key_span = None
        else:
            key_span = fm.value_spans.get(key)
        text = _scalar(raw)
        if raw is not None and text is None:
            span = key_span or Span(fm.open_line, 0, fm.open_line, 3)
            problems.append(
                Problem(
                    "bad-field",
                    f"`{key}` is a YAML {type(raw).__name__}; the agent expects a plain string",
                    span,
                )
            )
        values[key] = text.strip() if isinstance(text, str) else None
    return values, problems


def valid_type(raw: str | None) -> str | None:
    """The closed set of types; anything else counts as no type (case-sensitive, like the agent)."""
    return raw if raw in C.MEMORY_TYPES else None


def find_links(lines: list[str], start_line: int = 0) -> tuple[WikiLink, ...]:
    links: list[WikiLink] = []
    in_fence = False
    for number in range(start_line, len(lines)):
        line = lines[number]
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for match in _WIKI_LINK.finditer(line):
            links.append(
                WikiLink(match.group(1).strip(), Span.on_line(number, match.start(), match.end()))
            )
    return tuple(links)


def relative_name(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def parse_topic_text(
    text: str,
    path: Path,
    rel_path: str,
    mtime: float = 0.0,
    size: int | None = None,
    problems: tuple[Problem, ...] = (),
) -> TopicFile:
    """Parse a topic file from text already in memory (an editor buffer, or a file read)."""
    lines = text.split("\n")
    fm, fm_problems = parse_frontmatter(lines)
    values, value_problems = field_values(fm)
    body_line = fm.close_line + 1 if fm is not None and fm.close_line is not None else 0
    if fm is not None and fm.close_line is None:
        body_line = 0
    body = "\n".join(lines[body_line:])
    all_problems = [*problems, *fm_problems, *value_problems]
    if fm is None and not any(p.kind == "binary" for p in problems):
        all_problems.append(
            Problem(
                "no-frontmatter",
                "no frontmatter: the file has no name, description or type",
                Span.on_line(0, 0, len(lines[0]) if lines else 0),
            )
        )
    return TopicFile(
        path=path,
        rel_path=rel_path,
        name=values["name"],
        description=values["description"],
        type=valid_type(values["type"]),
        raw_type=values["type"],
        modified=values["modified"],
        frontmatter=fm,
        body=body,
        body_line=body_line,
        links=find_links(lines, body_line),
        mtime=mtime,
        size=len(text.encode("utf-8")) if size is None else size,
        problems=tuple(all_problems),
        text=text,
    )


def load_topic(path: Path, root: Path) -> TopicFile:
    """Read and parse one topic file; unreadable, binary or non-UTF-8 files become problems."""
    result = read_text(path)
    rel = relative_name(path, root)
    if result.binary or (not result.text and result.problems):
        return TopicFile(
            path,
            rel,
            None,
            None,
            None,
            None,
            None,
            None,
            "",
            0,
            (),
            result.mtime,
            result.size,
            result.problems,
        )
    return parse_topic_text(result.text, path, rel, result.mtime, result.size, result.problems)


def load_header(path: Path, root: Path) -> MemoryHeader:
    """What the prefetch scan reads: the frontmatter within the first 30 lines, nothing more."""
    result = read_head(path, C.SCAN_MAX_LINES)
    rel = relative_name(path, root)
    lines = result.text.split("\n")[: C.SCAN_MAX_LINES]
    fm, problems = parse_frontmatter(lines)
    if fm is not None and fm.close_line is None:
        fm = None  # not closed within the window: the scan sees no frontmatter
    values, value_problems = field_values(fm)
    return MemoryHeader(
        path=path,
        rel_path=rel,
        mtime=result.mtime,
        size=result.size,
        name=values["name"],
        description=values["description"] or None,
        type=valid_type(values["type"]),
        problems=(*result.problems, *problems, *value_problems),
    )
