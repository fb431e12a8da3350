"""Hostile values for the fuzz suite, and how long it runs.

The default run is short and reproducible (``derandomize``: the same examples every run, so CI
fails or passes for the code, not the seed); ``HYPOTHESIS_PROFILE=thorough`` hunts longer with
fresh random examples. ``MEMDIR_FUZZ_EXAMPLES=N`` sets the count (per method) by hand.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"


def fuzz_settings(examples: int, thorough: int, *suppress: HealthCheck) -> settings:
    """A fuzz run of ``examples`` (``thorough`` under the thorough profile), derandomized by
    default; ``suppress``: health checks to skip beyond the slow and large-data ones."""
    return settings(
        max_examples=int(
            os.environ.get("MEMDIR_FUZZ_EXAMPLES") or (thorough if THOROUGH else examples)
        ),
        derandomize=not THOROUGH,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
            *suppress,
        ],
    )


#: Examples per fuzzed method (or MCP tool).
FUZZ = fuzz_settings(25, 500, HealthCheck.function_scoped_fixture)

#: Strings that broke (or could break) a server: lengths past the file system's, lone
#: surrogates, NUL, traversal, regexes that overflow or nest too deep, control characters.
#: Catastrophic-backtracking regexes are the regex engine's own tests' business.
HOSTILE_STRINGS: list[str] = [
    "",
    " ",
    "a" * 300,
    "a" * 300 + ".md",
    "/memories/" + "a" * 300 + ".md",
    "\ud800",
    "x\udfffy.md",
    "\x00",
    "x\x00.md",
    "../outside.md",
    "/memories/../outside.md",
    "MEMORY.md",
    "/memories/MEMORY.md",
    "a{99999999999}",
    "(" * 3000 + ")" * 3000,
    "[",
    "\\",
    "**/*.md",
    "\u202egnp.md",
    "名前.md",
    "\r\n",
    "-1",
    "file:",
    "file:///",
    "untitled:Untitled-1",
    "https://example.invalid/x.md",
    "%00%2e%2e",
]

strings = st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(max_size=24))
numbers = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([0, -1, 2**31, 2**53, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, strings)
json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def mutated(template: dict[str, Any], extra: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``template`` as is, with one member replaced or removed, or anything else entirely."""

    @st.composite
    def one_changed(draw: st.DrawFn) -> dict[str, Any]:
        out = dict(template)
        if not out:
            return {draw(st.text(max_size=8)): draw(json_values)}
        key = draw(st.sampled_from(sorted(out)))
        if draw(st.booleans()):
            del out[key]
        else:
            out[key] = draw(st.one_of(json_values, extra))
        return out

    return st.one_of(st.just(template), one_changed(), json_values)


def schema_values(prop: dict[str, Any], text: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value of the JSON-schema property ``prop``'s type: ``text`` where it is a string."""
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    if "anyOf" in prop:
        return st.one_of(*(schema_values(p, text) for p in prop["anyOf"]))
    kind = prop.get("type")
    if kind == "string":
        return text
    if kind in ("integer", "number"):
        return numbers
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(schema_values(prop.get("items", {}), text), max_size=4)
    return json_values


@st.composite
def schema_object(
    draw: st.DrawFn,
    schema: dict[str, Any],
    text_for: Callable[[str], st.SearchStrategy[Any]],
) -> dict[str, Any]:
    """An object of the JSON-schema ``schema``: its required properties and a draw of the
    others, the strings of property ``name`` drawn from ``text_for(name)``."""
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return {
        name: draw(schema_values(prop, text_for(name)))
        for name, prop in props.items()
        if name in required or draw(st.booleans())
    }
