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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir import constants as C
from memdir.model import Frontmatter, MemoryHeader, Problem, Span, TopicFile, WikiLink
from memdir.textio import ReadResult, read_head, read_text, utf8_len

if TYPE_CHECKING:
    from frontmatter.default_handlers import YAMLHandler

_BOUNDARY = re.compile(r"^-{3,}\s*$")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*:(\s*)(.*?)\s*$")
_NESTED_KEY = re.compile(r"^(\s+)([A-Za-z_][\w.-]*)\s*:(\s*)(.*?)\s*$")
_WIKI_LINK = re.compile(r"\[\[([^\[\]\n|]+?)(?:\|[^\[\]\n]*)?\]\]")
#: JavaScript's ``\s`` (the agent is JavaScript), as a character class body.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: The agent's frontmatter: ``---`` to the first ``---`` after it, wherever that is (even
#: inside a line); group 1 is the YAML it parses.
AGENT_FRONTMATTER = re.compile(f"---[{JS_SPACE}]*\n(.*?)---[{JS_SPACE}]*\n?", re.DOTALL)
#: python-frontmatter's handler (and with it PyYAML) is imported on first use: most blocks are
#: read by :func:`load_simple_yaml`, and ``import yaml`` alone costs more than linting a
#: thousand files, which every CLI call and server start would otherwise pay.
_YAML: YAMLHandler | None = None

# --- the YAML subset read without PyYAML -------------------------------------------------------
# Frontmatter is nearly always ``key: plain text`` lines. For exactly that subset the result of
# PyYAML's safe loader is known without running it; anything else (quotes with escapes, lists,
# multi-line values, anchors, tags, numbers, dates, booleans, tabs, odd characters) falls back to
# PyYAML. tests/test_lint_yaml_fastpath.py checks the subset against PyYAML property by property.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][\w.-]*):(?: +(.*))?")
_SIMPLE_NESTED = re.compile(r"( +)([A-Za-z_][\w.-]*):(?: +(.*))?")
#: Characters PyYAML's reader rejects or treats as line breaks (NEL, LS, PS), plus tab and CR:
#: the complement of ``[\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]``,
#: written as the positive class because the negated one takes ~7 ms to compile on every start.
_YAML_AWKWARD = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
#: Plain words PyYAML 1.1 resolves to booleans or null (its implicit resolvers, verbatim).
_YAML_WORDS = frozenset(
    (
        *("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE"),
        *("false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"),
        *("null", "Null", "NULL"),
    )
)


_SIMPLE_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|([-+])(\d{2}):(\d{2}))?)?"
)


def _simple_timestamp(value: str) -> tuple[bool, Any]:
    """ISO 8601 the way PyYAML's safe constructor builds it (``modified`` is written so)."""
    match = _SIMPLE_TIMESTAMP.fullmatch(value)
    if match is None:
        return False, None
    year, month, day, hour, minute, second, fraction, tz, sign, tz_hour, tz_minute = match.groups()
    try:
        if hour is None:
            return True, dt.date(int(year), int(month), int(day))
        tzinfo: dt.tzinfo | None = None
        if sign:
            delta = dt.timedelta(hours=int(tz_hour), minutes=int(tz_minute))
            tzinfo = dt.timezone(-delta if sign == "-" else delta)
        elif tz:
            tzinfo = dt.UTC
        micros = int(fraction.ljust(6, "0")) if fraction else 0
        stamp = dt.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), micros, tzinfo
        )
    except ValueError:
        # PyYAML raises here too (an impossible date); let it report the problem.
        return False, None
    return True, stamp


def _simple_scalar(raw: str | None) -> tuple[bool, Any]:
    """``(True, value)`` when PyYAML would load ``raw`` as exactly ``value``; ``(False, None)``
    when only PyYAML can tell (the caller then falls back to it)."""
    value = raw.rstrip(" ") if raw else ""
    if not value:
        return True, None
    first = value[0]
    if first == '"':
        inner = value[1:-1]
        if len(value) >= 2 and value[-1] == '"' and '"' not in inner and "\\" not in inner:
            return True, inner
        return False, None
    if first == "'":
        inner = value[1:-1]
        if len(value) >= 2 and value[-1] == "'" and "'" not in inner.replace("''", ""):
            return True, inner.replace("''", "'")
        return False, None
    if first.isdigit():
        return _simple_timestamp(value)
    # A plain string: it must start with a letter (no indicator, number or sign) and must not
    # hold what would end it early or make it a mapping (": ", " #", a trailing ":").
    if not first.isalpha() or ": " in value or " #" in value or value[-1] == ":":
        return False, None
    if value in _YAML_WORDS:
        return False, None
    return True, value


def load_simple_yaml(lines: list[str]) -> dict[str, Any] | None:
    """Load a frontmatter block without PyYAML when it uses only the simple subset.

    Returns None when the block needs the real parser. The subset: ``key: value`` lines with
    plain, simply quoted or ISO 8601 date values, empty values (null), comment and blank lines,
    and one level of nesting under a key with an empty value (``metadata:`` / ``  type: x``).
    """
    if _YAML_AWKWARD.search("\n".join(lines)):
        return None
    data: dict[str, Any] = {}
    parent: str | None = None
    nested: dict[str, Any] | None = None
    indent = 0
    for line in lines:
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        if line[0] == " ":
            child = _SIMPLE_NESTED.fullmatch(line)
            if parent is None or child is None:
                return None
            if nested is None:
                nested, indent = {}, len(child.group(1))
            elif len(child.group(1)) != indent:
                return None
            ok, value = _simple_scalar(child.group(3))
            if not ok or child.group(2) in _YAML_WORDS:
                return None
            nested[child.group(2)] = value
            data[parent] = nested
            continue
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None or match.group(1) in _YAML_WORDS:
            return None
        ok, value = _simple_scalar(match.group(2))
        if not ok:
            return None
        key = match.group(1)
        data[key] = value
        # A key without a value is a null, or the parent of the indented lines that follow.
        parent, nested = (key, None) if value is None else (None, None)
    return data


#: Bounds on one frontmatter's YAML: its size (the agent's scan reads no more of a file than
#: this, so it never sees a larger block whole), its nesting, and the nodes it stands for with
#: every alias expanded (a "billion laughs" block is a few lines standing for 10^9 nodes).
YAML_MAX_CHARS = 64 * 1024
YAML_MAX_DEPTH = 64
YAML_MAX_NODES = 10_000


def _bounded(text: str) -> str:
    """``text`` when it is within :data:`YAML_MAX_CHARS`, else a YAML error (never parsed)."""
    if len(text) > YAML_MAX_CHARS:
        from yaml.error import MarkedYAMLError

        reason = f"frontmatter too large ({len(text):,} characters; at most {YAML_MAX_CHARS:,})"
        raise MarkedYAMLError(problem=reason)
    return text


def _load_yaml(text: str) -> Any:
    global _YAML
    _bounded(text)
    if _YAML is None:
        from frontmatter.default_handlers import YAMLHandler

        _YAML = YAMLHandler()
    # PyYAML's own loader, not the libyaml one python-frontmatter prefers when it is built:
    # their messages and positions differ, and the server the VS Code extension bundles has no
    # compiled modules. One loader everywhere: one lint result.
    return _YAML.load(text, Loader=safe_loader())


_SAFE_LOADER: type | None = None


def safe_loader() -> type:
    """PyYAML's pure-Python safe loader, reading tabs as the agent does.

    PyYAML refuses every tab outside quotes. The agent's parser takes one as white space after
    an indicator (``description:<TAB>text``), inside a plain value and after a block scalar's
    header: libyaml's rules, ported below (they also allow tabs inside flow collections and
    refuse them as indentation). Only libyaml refuses a tab right after a block scalar's
    indentation, which the agent and PyYAML read as content. Tested against libyaml and the
    agent's reading: tests/core/test_pure_fallbacks.py.
    """
    global _SAFE_LOADER
    if _SAFE_LOADER is not None:
        return _SAFE_LOADER
    import yaml
    from yaml.composer import ComposerError
    from yaml.scanner import ScannerError

    breaks = "\r\n\x85\u2028\u2029"
    ends = "\0 \t" + breaks

    class TabLoader(yaml.SafeLoader):
        # Hostile YAML: every node composed is weighed with its aliases expanded, and nesting
        # is counted, so a block standing for too much is an error before anything walks it.
        _weights: dict[int, int]
        _depth = 0

        def compose_document(self) -> Any:
            self._weights = {}
            self._depth = 0
            return super().compose_document()

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self._depth >= YAML_MAX_DEPTH:
                raise ComposerError(
                    None, None, f"nested deeper than {YAML_MAX_DEPTH} levels", self.get_mark()
                )
            self._depth += 1
            try:
                node: Any = super().compose_node(parent, index)
            finally:
                self._depth -= 1
            weights = self._weights
            if id(node) not in weights:
                weight = 1
                if isinstance(node.value, list):
                    for item in node.value:
                        for child in item if isinstance(item, tuple) else (item,):
                            weight += weights.get(id(child), 1)
                weights[id(node)] = weight
            if weights[id(node)] > YAML_MAX_NODES:
                raise ComposerError(
                    None,
                    None,
                    f"expands to more than {YAML_MAX_NODES:,} values through its aliases",
                    self.get_mark(),
                )
            return node

        # PyYAML's own methods with libyaml's rules for tabs (scanner.c: where it eats blanks).
        def scan_to_next_token(self) -> None:
            if self.index == 0 and self.peek() == "\ufeff":
                self.forward()
            line_break: Callable[[], str] = self.scan_line_break  # untyped in the stubs
            while True:
                while self.peek() == " " or (
                    self.peek() == "\t" and (self.flow_level or not self.allow_simple_key)
                ):
                    self.forward()
                if self.peek() == "#":
                    while self.peek() not in "\0" + breaks:
                        self.forward()
                if not line_break():
                    return
                if not self.flow_level:
                    self.allow_simple_key = True

        def scan_plain_spaces(self, indent: int, start_mark: Any) -> list[str] | None:
            chunks: list[str] = []
            length = 0
            while self.peek(length) in " \t":
                length += 1
            whitespaces = self.prefix(length)
            self.forward(length)
            if self.peek() not in breaks:
                return [whitespaces] if whitespaces else chunks
            scan_break: Callable[[], str] = self.scan_line_break  # untyped in the stubs
            line_break = scan_break()
            self.allow_simple_key = True
            if self.prefix(3) in ("---", "...") and self.peek(3) in ends:
                return None
            more: list[str] = []
            while self.peek() in " \t" + breaks:
                if self.peek() == "\t" and self.column < indent:
                    raise ScannerError(
                        "while scanning a plain scalar",
                        start_mark,
                        "found a tab character that violates indentation",
                        self.get_mark(),
                    )
                if self.peek() in " \t":
                    self.forward()
                else:
                    more.append(scan_break())
                    if self.prefix(3) in ("---", "...") and self.peek(3) in ends:
                        return None
            if line_break != "\n":
                chunks.append(line_break)
            elif not more:
                chunks.append(" ")
            return chunks + more

        def scan_block_scalar_indicators(self, start_mark: Any) -> tuple[bool | None, int | None]:
            chomping: bool | None = None
            increment: int | None = None
            for _ in range(2):
                char = self.peek()
                if char in "+-" and chomping is None:
                    chomping = char == "+"
                    self.forward()
                elif char in "0123456789" and increment is None:
                    if char == "0":
                        raise ScannerError(
                            "while scanning a block scalar",
                            start_mark,
                            "expected indentation indicator in the range 1-9, but found 0",
                            self.get_mark(),
                        )
                    increment = int(char)
                    self.forward()
            if self.peek() not in "\0 \t#" + breaks:
                raise ScannerError(
                    "while scanning a block scalar",
                    start_mark,
                    f"expected chomping or indentation indicators, but found {self.peek()!r}",
                    self.get_mark(),
                )
            return chomping, increment

        def scan_block_scalar_ignored_line(self, start_mark: Any) -> None:
            while self.peek() in " \t":
                self.forward()
            if self.peek() == "#":
                while self.peek() not in "\0" + breaks:
                    self.forward()
            if self.peek() not in "\0" + breaks:
                raise ScannerError(
                    "while scanning a block scalar",
                    start_mark,
                    f"expected a comment or a line break, but found {self.peek()!r}",
                    self.get_mark(),
                )
            scan_break: Callable[[], str] = self.scan_line_break  # untyped in the stubs
            scan_break()

    _SAFE_LOADER = TabLoader
    return TabLoader


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
