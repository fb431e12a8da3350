"""Parsing topic files: the YAML frontmatter (via python-frontmatter) and ``[[name]]`` links.

The block is located in the raw text so every field keeps its exact position (python-frontmatter
strips the text and loses line numbers); its YAML is loaded with python-frontmatter's handler, so
the accepted YAML is the library's, always by PyYAML's pure-Python safe loader. Both shapes of
``type`` are accepted: top-level, or nested as ``metadata: {type: ...}`` (which wins when both
are there, as in the agent). Unknown fields are kept and never an error.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir import constants as C
from memdir.model import Frontmatter, MemoryHeader, Problem, Span, TopicFile, WikiLink
from memdir.textio import ReadResult, read_head, read_text, utf8_len

if TYPE_CHECKING:
    from collections.abc import Sequence
from memdir.agent.yaml_loaders import _bounded, _load_yaml, load_simple_yaml, safe_loader

_BOUNDARY = re.compile(r"^-{3,}\s*$")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*:(\s*)(.*?)\s*$")
_NESTED_KEY = re.compile(r"^(\s+)([A-Za-z_][\w.-]*)\s*:(\s*)(.*?)\s*$")
_WIKI_LINK = re.compile(r"\[\[([^\[\]\n|]+?)(?:\|[^\[\]\n]*)?\]\]")
#: JavaScript's ``\s`` (the agent is JavaScript), as a character class body.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: The agent's frontmatter: ``---`` to the first ``---`` after it, wherever that is (even
#: inside a line); group 1 is the YAML it parses.
AGENT_FRONTMATTER = re.compile(f"---[{JS_SPACE}]*\n(.*?)---[{JS_SPACE}]*\n?", re.DOTALL)


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
        # As the agent reads it: a block that only parses after its retry (a value quoted, tabs
        # as spaces) is read, not reported.
        loaded = load_agent_yaml("\n".join(block))[0]
    except Exception as exc:
        # A third-party parser on untrusted text: besides YAMLError, impossible dates raise
        # ValueError from the constructor. Any failure is the file's problem, never a crash.
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


#: Fields read from the merged view of the frontmatter: top-level extras overlaid by
#: ``metadata``, as the agent's parser builds it (``name`` and ``description`` are top-level only).
_MERGED_FIELDS = ("type", "modified")


def field_key(fm: Frontmatter, key: str) -> str:
    """The frontmatter key a merged field (``type``, ``modified``) is read from.

    The agent overlays the top-level fields with ``metadata``, so ``metadata.type`` wins over a
    top-level ``type`` when both are there (even an empty one), in the scan and when it rewrites
    the file.
    """
    metadata = fm.data.get("metadata")
    if key in _MERGED_FIELDS and isinstance(metadata, dict) and key in metadata:
        return f"metadata.{key}"
    return key


def field_values(fm: Frontmatter | None) -> tuple[dict[str, str | None], list[Problem]]:
    """``name``, ``description``, raw ``type`` and ``modified`` as strings, plus shape problems.

    ``type`` and ``modified`` come from :func:`field_key`'s key.
    """
    values: dict[str, str | None] = {"name": None, "description": None, "type": None}
    values["modified"] = None
    problems: list[Problem] = []
    if fm is None:
        return values, problems
    data = fm.data
    for key in ("name", "description", "type", "modified"):
        source = field_key(fm, key)
        raw = data.get(key) if source == key else data["metadata"].get(key)
        text = _scalar(raw)
        if raw is not None and text is None:
            span = fm.value_spans.get(source) or Span(fm.open_line, 0, fm.open_line, 3)
            problems.append(
                Problem(
                    "bad-field",
                    f"`{source}` is a YAML {type(raw).__name__}; the agent expects a plain string",
                    span,
                    key=key,
                )
            )
        values[key] = text.strip() if isinstance(text, str) else None
    return values, problems


def valid_type(raw: str | None) -> str | None:
    """The closed set of types; anything else counts as no type (case-sensitive, like the agent)."""
    return raw if raw in C.MEMORY_TYPES else None


def wiki_names(line: str) -> list[str]:
    """The names a line links as ``[[name]]`` (or ``[[name|label]]``), in order."""
    return [match.group(1).strip() for match in _WIKI_LINK.finditer(line)] if "[[" in line else []


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
        # Most files link nothing; skip the per-line scan for them.
        links=find_links(lines, body_line) if "[[" in text else (),
        mtime=mtime,
        size=utf8_len(text) if size is None else size,
        problems=tuple(all_problems),
        text=text,
    )


def load_topic(path: Path, root: Path) -> TopicFile:
    """Read and parse one topic file; unreadable, binary or non-UTF-8 files become problems,
    and so does one resolving outside ``root`` (it is not read)."""
    return topic_of_read(read_text(path, root=root), path, relative_name(path, root))


def topic_of_read(result: ReadResult, path: Path, rel: str) -> TopicFile:
    """The topic file a :func:`memdir.textio.read_text` result holds (how :func:`load_topic`
    and the lint engine, which reads files itself, make one)."""
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


# --- the frontmatter as the agent's scan reads it -------------------------------------------------
# The prefetch scan (and path A, for MEMORY.md) finds frontmatter with the agent's regular
# expression, not by lines: a block may close on any ``---``, even inside a value. Its YAML is
# memdir's parse; when that fails, the agent's retry (quoting values with YAML indicators,
# tabs as spaces). Values are typed as the agent's YAML 1.2 parser types them.


def agent_frontmatter(text: str) -> re.Match[str] | None:
    """The agent's frontmatter match in ``text``, or None when it sees none.

    The expression is tried only when another ``---`` follows the first three characters; a
    leading BOM is skipped, as the agent drops it.
    """
    shift = 1 if text.startswith("\ufeff") else 0
    if text.find("---", shift + 3) < 0:
        return None
    return AGENT_FRONTMATTER.match(text, shift)


#: A ``key: value`` line the agent's retry may quote (JavaScript's ``\S`` and ``.``).
_RETRY_LINE = re.compile(f"([a-zA-Z_-]+):[{JS_SPACE}]+([^{JS_SPACE}][^\n\r\u2028\u2029]*)")
_RETRY_QUOTED = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_LEADING_TABS = re.compile(r"^\t+", re.MULTILINE)


def _flow_list(value: str) -> bool:
    if not (value.startswith("[") and value.endswith("]")):
        return False
    try:
        return isinstance(_load_yaml(value), list)
    except Exception:
        return False


def agent_retry_text(block: str) -> str:
    """The agent's second try at a block whose YAML did not parse: a value holding a YAML
    indicator is double-quoted (unless already quoted or a flow list), and leading tabs become
    two spaces each."""
    lines = []
    for line in block.split("\n"):
        match = _RETRY_LINE.fullmatch(line)
        if match is not None:
            key, value = match.groups()
            quoted = value[0] in "\"'" and value.endswith(value[0])
            if not quoted and not _flow_list(value) and _RETRY_QUOTED.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{key}: "{escaped}"'
        lines.append(line)
    return _LEADING_TABS.sub(lambda tabs: "  " * len(tabs.group()), "\n".join(lines))


def _load_block(block: str) -> Any:
    simple = load_simple_yaml(block.split("\n"))
    return simple if simple is not None else _load_yaml(block)


def load_agent_yaml(block: str) -> tuple[Any, str]:
    """A frontmatter block's YAML as the agent gets it, with the text that parsed: the block
    itself, or the agent's retry of it. Raises the first error when both fail."""
    try:
        return _load_block(block), block
    except Exception as first:
        retry = agent_retry_text(block)
        try:
            return _load_block(retry), retry
        except Exception:
            raise first from None


#: YAML 1.2 core numbers: what the agent's parser reads as a number (PyYAML's 1.1 rules differ).
_CORE_NUMBER = re.compile(
    r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_CORE_LOADER: type | None = None


def _load_core_yaml(text: str) -> Any:
    """``text`` loaded with YAML 1.2's core types, as the agent's parser reads it: only
    ``true``/``false`` are booleans, dates stay strings, and numbers are the core schema's.
    Only whether a value is a string matters to the caller: every number loads as ``0.0``."""
    global _CORE_LOADER
    import yaml

    _bounded(text)

    if _CORE_LOADER is None:

        class CoreLoader(safe_loader()):  # type: ignore[misc]
            pass

        replaced = {f"tag:yaml.org,2002:{kind}" for kind in ("bool", "int", "float", "timestamp")}
        CoreLoader.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag not in replaced]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        CoreLoader.add_implicit_resolver(
            "tag:yaml.org,2002:bool",
            re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
            list("tTfF"),
        )
        number = re.compile(f"^(?:{_CORE_NUMBER.pattern})$")
        CoreLoader.add_implicit_resolver("tag:memdir:number", number, list("-+.0123456789"))
        CoreLoader.add_constructor("tag:memdir:number", lambda _loader, _node: 0.0)
        _CORE_LOADER = CoreLoader
    return yaml.load(text, Loader=_CORE_LOADER)


def _agent_string(value: Any, key: str, parsed: str) -> str | None:
    """A field as the agent reads it: a non-empty string, else nothing. Where PyYAML and the
    agent's YAML 1.2 parser may type a scalar differently (plain words like ``yes``, dates,
    numbers), the block is read again with the agent's types."""
    if isinstance(value, bool | int | float | dt.date) or (
        isinstance(value, str) and _CORE_NUMBER.fullmatch(value)
    ):
        loaded = _load_core_yaml(parsed)
        value = loaded.get(key) if isinstance(loaded, dict) else None
    return value if isinstance(value, str) and value else None


def agent_fields(text: str) -> tuple[dict[str, str | None], tuple[Problem, ...]]:
    """``name``, ``description`` and ``type`` of a topic file's head as the agent's scan reads
    them: raw strings (a block scalar keeps its final newline), ``type`` from ``metadata`` when
    that has the key, valid only as one of the four types."""
    fields: dict[str, str | None] = {"name": None, "description": None, "type": None}
    match = agent_frontmatter(text)
    if match is None:
        return fields, ()
    try:
        loaded, parsed = load_agent_yaml(match.group(1))
    except Exception as exc:
        mark = getattr(exc, "problem_mark", None)
        line = 1 + (mark.line if mark is not None else 0)
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return fields, (
            Problem("yaml-error", f"malformed YAML: {reason}", Span.on_line(line, 0, 0)),
        )
    if not isinstance(loaded, dict):
        return fields, ()
    for key in ("name", "description"):
        fields[key] = _agent_string(loaded.get(key), key, parsed)
    metadata = loaded.get("metadata")
    merged = {k: v for k, v in loaded.items() if k not in ("name", "description", "metadata")}
    merged = {k: v for k, v in merged.items() if v is not None}
    if isinstance(metadata, dict):
        merged.update(metadata)
    fields["type"] = valid_type(merged.get("type") if isinstance(merged.get("type"), str) else None)
    return fields, ()


def load_header(path: Path, root: Path) -> MemoryHeader:
    """What the prefetch scan reads: the agent's head read of the file (30 lines, 64 KiB) and
    the frontmatter the agent finds in it, nothing more."""
    result = read_head(path, C.SCAN_MAX_LINES)
    fields, problems = agent_fields(result.text)
    return MemoryHeader(
        path=path,
        rel_path=relative_name(path, root),
        mtime=result.mtime,
        size=result.size,
        name=fields["name"],
        description=fields["description"],
        type=fields["type"],
        problems=(*result.problems, *problems),
    )


def body_head(path: Path) -> str:
    """What the prefetch would inject of the file's body: its head cut at the injection caps
    (:data:`~memdir.constants.SURFACE_MAX_LINES` lines, :data:`~memdir.constants.SURFACE_MAX_BYTES`
    bytes), without the frontmatter; empty for an unreadable or binary file."""
    result = read_head(path, C.SURFACE_MAX_LINES, C.SURFACE_MAX_BYTES)
    if result.binary:
        return ""
    match = agent_frontmatter(result.text)
    return result.text[match.end() :] if match else result.text


def with_bodies(headers: Sequence[MemoryHeader]) -> list[MemoryHeader]:
    """``headers`` with :attr:`~memdir.model.MemoryHeader.body` read where it is not yet."""
    return [h if h.body is not None else replace(h, body=body_head(h.path)) for h in headers]


# --- a value cut by a YAML comment ---------------------------------------------------------

#: What makes a YAML value anything but a plain scalar, where it starts.
_NOT_PLAIN = tuple("\"'|>[{&*!%@`")


@dataclass(frozen=True, slots=True)
class CommentCut:
    """A top-level text field whose line holds a YAML comment: what the agent reads of it, and
    what the line says."""

    key: str
    read: str
    written: str
    #: Whether the ``#`` starts a word (``#123``, ``#tag``): text, not a comment anyone meant.
    glued: bool


def comment_cut(topic: TopicFile, key: str) -> CommentCut | None:
    """The comment cut of ``key``'s value, or None when its line has no comment after it.

    Only what the YAML reader really cut: a plain scalar on the key's own line, whose loaded
    value is the text before `` #`` (or nothing, when the line's value starts with ``#``).
    """
    fm = topic.frontmatter
    span = fm.value_spans.get(key) if fm is not None else None
    if fm is None or span is None or "#" not in topic.text:
        return None
    lines = topic.text.split("\n", span.start_line + 1)
    raw = lines[span.start_line][span.start_col : span.end_col].strip()
    if not raw or raw.startswith(_NOT_PLAIN):
        return None
    if raw.startswith("#"):
        start = 0
    else:
        match = _COMMENT.search(raw)
        if match is None:
            return None
        start = match.start() + 1
    read = raw[:start].rstrip()
    loaded = fm.data.get(key)
    if (loaded.strip() if isinstance(loaded, str) else loaded) != (read or None):
        return None  # a multi-line scalar, or a reading memdir cannot vouch for: no claim
    glued = start + 1 < len(raw) and not raw[start + 1].isspace()
    return CommentCut(key, read, raw, glued)


_COMMENT = re.compile(r"[ \t]#")
