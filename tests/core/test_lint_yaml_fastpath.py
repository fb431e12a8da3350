"""The frontmatter subset read without PyYAML must give exactly what PyYAML gives.

:func:`memdir.agent.yaml_loaders.load_simple_yaml` exists for speed (``import yaml`` costs more than
linting a thousand files); whenever it answers, its answer must equal PyYAML's safe loader, the one
python-frontmatter uses. Random blocks are built from lines that sit on the subset's edges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from memdir.agent import topic as topic_module
from memdir.agent.topic import parse_topic_text
from memdir.agent.yaml_loaders import load_simple_yaml

KEYS = st.sampled_from(
    ["name", "description", "type", "modified", "metadata", "owner", "a.b", "x-y", "_k", "on", "y"]
)
VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "project",
            "Project",
            "yes",
            "no mocks in tests",
            "No",
            "null",
            "~",
            "true story",
            "C# and F#",
            "a: b",
            "a #comment",
            "trailing:",
            "x:y",
            "'quoted'",
            "'it''s'",
            "'bad ' quote'",
            '"double"',
            '"with \\\\ escape"',
            '"unterminated',
            "2026-07-15",
            "2026-07-15T09:12:00Z",
            "2026-07-15T09:12:00.123456+02:00",
            "2026-13-45",
            "2026-7-5",
            "12",
            "1.5",
            "0x1F",
            "[a, b]",
            "{a: 1}",
            "&anchor x",
            "*alias",
            "!tag x",
            "|",
            ">",
            "- item",
            "%x",
            "@x",
            "`x`",
            "数据保留策略",
            "Ünïcödé value",
            "tab\there",
            "value\u2028sep",
            "emoji 😀 ok",
        ]
    ),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
)
LINE = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", KEYS, VALUES),
    st.builds(lambda k, v: f"{k}:{v}", KEYS, VALUES),
    st.builds(lambda k: f"{k}:", KEYS),
    st.builds(lambda k, v: f"  {k}: {v}", KEYS, VALUES),
    st.builds(lambda k, v: f"    {k}: {v}", KEYS, VALUES),
    st.sampled_from(["", "# comment", "  # indented comment", "- list item", "...", "  "]),
)
BLOCKS = st.lists(LINE, max_size=8)


def pyyaml(lines: list[str]) -> Any:
    return yaml.load("\n".join(lines), Loader=yaml.CSafeLoader)


@given(BLOCKS)
def test_subset_answers_exactly_like_pyyaml(lines: list[str]) -> None:
    fast = load_simple_yaml(lines)
    if fast is None:
        return
    assert fast == pyyaml(lines) or (fast == {} and pyyaml(lines) is None)


@pytest.mark.parametrize(
    "lines",
    [
        ["name: a", "description: no mocks in tests", "type: project"],
        ["name: a", "metadata:", "  type: user", "owner: ana"],
        ["modified: 2026-07-15T09:12:00Z", "description: 'it''s fine'"],
        ["# only a comment", "", "name: x"],
    ],
)
def test_common_blocks_take_the_fast_path(lines: list[str]) -> None:
    assert load_simple_yaml(lines) == pyyaml(lines)


@pytest.mark.parametrize(
    "lines",
    [
        ["description: a: b"],
        ["type: yes"],
        ["count: 12"],
        ["tags: [a, b]"],
        ["description: |", "  two", "  lines"],
        ["modified: 2026-13-45"],
        ["name: a", "  continued"],
    ],
)
def test_anything_else_falls_back(lines: list[str]) -> None:
    assert load_simple_yaml(lines) is None


@given(BLOCKS, st.text(max_size=40))
def test_parse_topic_text_is_the_same_with_and_without_the_subset(
    lines: list[str], body: str
) -> None:
    text = "---\n" + "\n".join(lines) + "\n---\n" + body
    fast = parse_topic_text(text, Path("/m/a.md"), "a.md")
    original = topic_module.load_simple_yaml
    topic_module.load_simple_yaml = lambda _lines: None  # type: ignore[assignment]
    try:
        slow = parse_topic_text(text, Path("/m/a.md"), "a.md")
    finally:
        topic_module.load_simple_yaml = original
    assert fast == slow


def test_impossible_dates_are_a_problem_not_a_crash() -> None:
    text = "---\nname: a\nmodified: 2026-13-45\n---\n"
    parsed = parse_topic_text(text, Path("/m/a.md"), "a.md")
    [problem] = parsed.problems
    assert problem.kind == "yaml-error" and "month must be in 1..12" in problem.message
