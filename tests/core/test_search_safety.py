"""A user's pattern never freezes its caller: backtracking patterns run in a killable child.

``(-+)+x`` over a Markdown rule line (32 dashes) runs for minutes in Python's ``re``; a search
with it ends after the time limit with an error naming the file, and every other pattern gives
the same answers whichever way it runs.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from memdir.extract.tools import ProjectTools
from memdir.search import worker as search_worker
from memdir.search.grep import (
    PATTERN_SECONDS,
    InvalidPatternError,
    SlowPatternError,
    compile_pattern,
    search_files,
    search_texts,
)
from memdir.search.lines import grep_lines

RULE = "-" * 32
FILES = {
    "MEMORY.md": "- [Deploy](deploy.md) — staging first\n",
    "deploy.md": f"---\nname: deploy\n---\nintro\n{RULE}\nDeploys go to staging.\n",
}
#: Minutes in ``re`` on RULE (the issue's measurement); any other outcome than the time limit
#: firing would take that long.
CATASTROPHIC = "(-+)+x"


def test_a_catastrophic_pattern_ends_with_an_error_naming_the_file() -> None:
    with pytest.raises(SlowPatternError) as raised:
        search_files(FILES, FILES.get, compile_pattern(CATASTROPHIC), seconds=0.5)
    assert str(raised.value) == (
        "the pattern took longer than 0.5 s on deploy.md; simplify it or search literally"
    )


@pytest.mark.processes
def test_the_default_limit_is_named_in_the_error() -> None:
    with pytest.raises(SlowPatternError, match=rf"longer than {PATTERN_SECONDS:g} s on deploy\.md"):
        search_files(FILES, FILES.get, compile_pattern(CATASTROPHIC))


@pytest.mark.processes
def test_a_slow_search_leaves_other_threads_running() -> None:
    """The waiting thread holds no GIL: another thread finishes its work while the search runs."""
    other_done = threading.Event()
    order: list[str] = []

    def search() -> None:
        try:
            search_files(FILES, FILES.get, compile_pattern(CATASTROPHIC))
        except SlowPatternError:
            order.append("search")

    def other() -> None:
        sum(range(200_000))  # pure Python: needs the GIL
        order.append("other")
        other_done.set()

    searching = threading.Thread(target=search)
    searching.start()
    threading.Thread(target=other).start()
    assert other_done.wait(timeout=60)
    searching.join()
    assert order == ["other", "search"]


@pytest.mark.parametrize(
    "pattern",
    [
        "staging",  # literal: in-process
        "Deploy.",  # no repetition: in-process
        "stag(ing)?",
        "^-+$",
        r"(\w+) to \1",
        "DEPLOY|intro",
        "(?i)deploys",
        "é+|g.+g",
    ],
)
@pytest.mark.parametrize("ignore_case", [False, True])
def test_same_answers_in_process_and_in_the_child(pattern: str, ignore_case: bool) -> None:
    regex = compile_pattern(pattern, ignore_case=ignore_case)
    texts = {**FILES, "notes/é.md": "é café\r\n\ud800 lone surrogate staging\n"}
    expected = [
        (rel, line, column, text[:400])
        for rel, body in texts.items()
        for line, column, text in grep_lines(body, regex)
    ]
    found = search_files(texts, texts.get, regex, "**/*")
    assert [(m.path, m.line, m.character, m.text) for m in found.matches] == expected
    assert found.truncated is False


@pytest.mark.parametrize("pattern", ["x", "x+"])
def test_the_match_limit_is_the_same_either_way(pattern: str) -> None:
    texts = [(f"{n}.md", "x\n" * 7) for n in range(3)]
    capped = search_texts(texts, compile_pattern(pattern), limit=10)
    assert [(m.path, m.line) for m in capped.matches][-2:] == [("1.md", 1), ("1.md", 2)]
    assert len(capped.matches) == 10 and capped.truncated is True
    exact = search_texts(texts, compile_pattern(pattern), limit=21)
    assert len(exact.matches) == 21 and exact.truncated is False


def test_a_child_that_stops_early_leaves_no_error() -> None:
    """At the limit the child exits while the parent may still be writing files to it."""
    texts = [(f"{n}.md", "x\n" * 50_000) for n in range(20)]
    capped = search_texts(texts, compile_pattern("x+"), limit=5)
    assert [(m.path, m.line) for m in capped.matches] == [("0.md", n) for n in range(5)]
    assert capped.truncated is True


def test_the_child_runs_only_for_patterns_that_can_backtrack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = search_worker.run

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(str(args[1]))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search_worker, "run", counted)
    for pattern in ("staging", "^Deploys go", r"[Ss]tag\w\wg", "Deploy.", "s" * 200):
        search_files(FILES, FILES.get, compile_pattern(pattern))
    assert calls == []
    for pattern in ("stag+ing", "a|b", "x?", "a{2}", "(?:x)", "s" * 201):
        search_files(FILES, FILES.get, compile_pattern(pattern))
    assert calls == ["stag+ing", "a|b", "x?", "a{2}", "(?:x)", "s" * 201]


@pytest.mark.parametrize("pattern", ["abc", "ab+c"])
def test_long_lines_are_searched_in_their_first_characters_either_way(pattern: str) -> None:
    texts = [("a.md", "x" * 10 + "abc\n" + "x" * 100 + "abc\n")]
    found = search_texts(texts, compile_pattern(pattern), max_line_chars=50)
    assert [(m.line, m.character) for m in found.matches] == [(0, 10)]


@pytest.mark.parametrize("pattern", ["x", "x+"])
def test_files_are_read_one_by_one_and_not_after_the_limit(pattern: str) -> None:
    read: list[str] = []

    def texts() -> Iterator[tuple[str, str]]:
        for n in range(100):
            read.append(f"{n}.md")
            yield f"{n}.md", "x\n" * 50_000  # 100 kB: more than a pipe holds

    capped = search_texts(texts(), compile_pattern(pattern), limit=5)
    assert len(capped.matches) == 5 and capped.truncated is True
    assert len(read) < 100


@pytest.mark.parametrize("pattern", ["x", "x+"])
def test_a_file_that_cannot_be_read_fails_the_search_either_way(pattern: str) -> None:
    def read(rel: str) -> str:
        if rel == "b.md":
            raise PermissionError(f"cannot read {rel}")
        return "x\n"

    with pytest.raises(PermissionError, match=r"cannot read b\.md"):
        search_files(["a.md", "b.md", "c.md"], read, compile_pattern(pattern))


@pytest.mark.processes
@pytest.mark.skipif(not hasattr(signal, "alarm"), reason="POSIX alarm")
def test_a_child_whose_parent_died_ends_by_itself() -> None:
    """A parent killed mid-search cannot kill its child: the child's own alarm ends it."""
    header = {"pattern": CATASTROPHIC, "flags": 32, "limit": 5, "chars": 400}
    header |= {"line_chars": None, "seconds": 0.1}
    body = RULE.encode()
    job = json.dumps(header).encode() + b"\n%d\n" % len(body) + body
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from memdir.search.worker import main; main()"
    )
    child = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            code,
            str(Path(search_worker.__file__).resolve().parents[2]),
        ],
        input=job,
        capture_output=True,
        timeout=120,  # against a hang of the test itself; the alarm fires after 3 s
        check=False,
    )
    assert child.returncode == -signal.SIGALRM
    assert child.stdout == b'"ready"\n'


def test_nothing_to_search_starts_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_worker, "run", None)
    assert search_texts([], compile_pattern(CATASTROPHIC)).matches == ()
    assert search_files(FILES, FILES.get, compile_pattern(CATASTROPHIC), "*.txt").matches == ()


def test_a_child_that_fails_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_worker, "_BOOT", "import sys; sys.exit('worker broke')")
    with pytest.raises(RuntimeError, match=r"search process failed .*worker broke"):
        search_files(FILES, FILES.get, compile_pattern("a+"))


@pytest.mark.processes
def test_the_extraction_agents_grep_is_bounded_too(tmp_path: Path) -> None:
    """A model's pattern runs where a user's does: the extraction agent's project ``grep``."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(f"# {RULE}\nprint('hi')\n", encoding="utf-8")
    tools = ProjectTools(tmp_path)
    slow = tools.call("grep", {"pattern": CATASTROPHIC})
    assert slow.is_error
    assert slow.text.endswith(
        "the pattern took longer than 2 s on src/app.py; simplify it or search literally"
    )
    assert tools.call("grep", {"pattern": "pri+nt"}).text == "src/app.py:2: print('hi')"


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a{99999999999}", "a repetition count is too large"),
        ("(" * 5000 + ")" * 5000, "the pattern nests too deeply"),
        ("x" * 10_001, "the pattern is longer than 10000 characters"),
        ("(", "missing ), unterminated subpattern at position 0"),
    ],
)
def test_patterns_that_cannot_compile_say_why(pattern: str, message: str) -> None:
    with pytest.raises(InvalidPatternError) as raised:
        compile_pattern(pattern)
    assert str(raised.value) == message
    assert raised.value.__cause__ is None  # no chained re traceback to show


def test_a_valid_pattern_compiles_as_re_does() -> None:
    assert compile_pattern("a{3}", ignore_case=True) == re.compile("a{3}", re.IGNORECASE)
