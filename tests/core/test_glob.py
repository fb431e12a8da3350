"""Globs run as an automaton: the answers of the old regex translation, in time linear in the path.

The old translation (a glob turned into a Python ``re``) stays here as the reference: it was the
meaning of every glob memdir accepted, and ``re`` backtracking on it froze the server.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memdir.search.grep import MAX_GLOB_CHARS, InvalidPatternError, compile_glob, glob_matcher

# The default run is reproducible; HYPOTHESIS_PROFILE=thorough (tests/conftest.py) sets the count.
REPRODUCIBLE = settings(
    derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def reference_regex(pattern: str) -> re.Pattern[str]:
    """The glob translation memdir used before the automaton (backtracks: reference only)."""
    return re.compile("(?s:" + _reference_body(pattern) + r")\Z")


def _reference_body(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = pattern[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end
        elif char == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_reference_body(o) for o in options) + ")")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def test_catastrophic_globs_answer() -> None:
    # Backtracking took 7.4 s on the 8-star glob and did not finish in 60 s on the 10-star one.
    for stars in (8, 10, 40):
        glob = "*a" * stars + "*b.md"
        assert compile_glob(glob)("a" * 40) is False
        assert compile_glob(glob)("a" * 40 + "b.md") is True
        assert compile_glob(glob)("a" * 39 + "/b.md") is False  # "*" stays inside one name
        assert compile_glob(glob.replace("*", "**"))("a/" * 40 + "b.md") is True
    deep = "**/" * 30 + "x.md"
    assert compile_glob(deep)("a/" * 200 + "x.md") is True
    assert compile_glob(deep)("a/" * 200 + "y.md") is False
    assert compile_glob("{*a,a*}" * 20 + "c")("a" * 60) is False
    assert compile_glob("**a" * 30 + "b")("a" * 4000) is False


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("[]a]", "]", True),  # a "]" first in a class is a member, as in shells
        ("[!]a]", "b", True),
        ("[!]a]", "]", False),
        ("[^a]", "b", True),  # "^" negates too (it did in the regex)
        ("[\\]", "\\", True),  # a backslash is itself
        ("[a-c]", "b", True),
        ("[", "[", True),  # unclosed: a literal
        ("{a,b", "{a,b", True),
        ("{}", "", True),
        ("{,x}y", "y", True),
        ("a**", "a/b/c", True),
        ("**/", "a/", True),
        ("**/", "", True),
        ("*", "a\nb", True),  # names are any characters but "/"
        ("?", "/", False),
    ],
)
def test_edges_keep_their_meaning(glob: str, path: str, matches: bool) -> None:
    assert compile_glob(glob)(path) is matches


def test_invalid_and_long_globs_are_refused_with_a_reason() -> None:
    with pytest.raises(InvalidPatternError, match=r"invalid glob '\[z-a\]x\]': bad character"):
        compile_glob("[z-a]x]")
    with pytest.raises(InvalidPatternError, match=f"longer than {MAX_GLOB_CHARS}"):
        glob_matcher("*" * (MAX_GLOB_CHARS + 1))
    assert compile_glob("*" * MAX_GLOB_CHARS)("abc") is True


def test_a_glob_without_slash_matches_the_name_in_any_folder() -> None:
    assert glob_matcher("*.md")("x/y/a.md") is True
    assert compile_glob("*.md")("x/y/a.md") is False
    assert glob_matcher("x/*.md")("x/a.md") is True


_GLOB_PARTS = st.sampled_from(["a", "b", "/", "*", "**", "**/", "?", "[ab]", "[!a]", "{a,b/*}"])
_PATH_CHARS = st.sampled_from("ab/")


@REPRODUCIBLE
@given(parts=st.lists(_GLOB_PARTS, max_size=8), paths=st.lists(st.text(_PATH_CHARS, max_size=10)))
def test_the_automaton_agrees_with_the_regex(parts: list[str], paths: list[str]) -> None:
    glob = "".join(parts)
    reference = reference_regex(glob)
    matches = compile_glob(glob)
    for path in paths:
        assert matches(path) is (reference.match(path) is not None), (glob, path)


@pytest.mark.filterwarnings("ignore:Possible:FutureWarning")  # "[[" and "--" in a class
@REPRODUCIBLE
@given(glob=st.text(st.sampled_from("ab/*?[]!^{},\\-"), max_size=12), path=st.text("ab/]!{},-"))
def test_any_glob_the_regex_compiled_means_the_same(glob: str, path: str) -> None:
    # Stray brackets and braces too; the one known difference is a class opened by "[!]" or
    # "[^]", where the regex's class ran on into the translation of what followed it.
    if re.search(r"\[[!^]\]", glob):
        return
    try:
        reference = reference_regex(glob)
    except re.error:
        with pytest.raises(InvalidPatternError):
            compile_glob(glob)
        return
    assert compile_glob(glob)(path) is (reference.match(path) is not None), (glob, path)
