"""Frontmatter YAML, read as the agent's parser reads it: the plain subset most memories use,
read without PyYAML (:func:`load_simple_yaml`, which answers only when PyYAML would answer the
same), and PyYAML's pure-Python safe loader, bounded (:data:`YAML_MAX_CHARS`, depth, nodes) and
reading tabs as the agent does (:func:`safe_loader`)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from frontmatter.default_handlers import YAMLHandler

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
