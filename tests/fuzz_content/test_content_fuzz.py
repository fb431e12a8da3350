"""Property-based fuzz over document contents (issue 18): random Markdown- and YAML-ish texts as
MEMORY.md and topic files, on disk and as an editor's unsaved text.

* The core never raises: lint (``DirState``, what ``memdir lint`` and the server run), the
  index parser and reader, the scan and its manifest, recall's lexical selector.
* ``memdir lint --fix`` (``apply_fixes``, through the one writer) keeps every character outside
  the ranges its fixes edit, and converges: once no fix waits on an overlapping one, another run
  writes nothing.

The default run is short and reproducible (``derandomize``: the same examples every run);
``HYPOTHESIS_PROFILE=thorough`` hunts longer with fresh random examples, and
``MEMDIR_FUZZ_EXAMPLES=N`` sets the count by hand.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fuzz.strategies import fuzz_settings
from hypothesis import event, given
from hypothesis import strategies as st
from memdir.agent.index import load_index, parse_index
from memdir.agent.manifest import format_manifest
from memdir.agent.scan import scan
from memdir.lint.fix import apply_fixes
from memdir.lint.state import DirState
from memdir.recall.lexical import select_lexical

FUZZ = fuzz_settings(60, 1000)

# Pieces that steer random text into the parsers' corners: frontmatter fragments, index
# entries, links, fences, comments, BOM, NUL, lone surrogates, CR-only and CRLF line ends,
# tabs, deep nesting (YAML flow collections, block quotes, lists, brackets), huge lines.
FRAGMENTS = st.sampled_from(
    [
        "---\n",
        "---\r",
        "---\r\n",
        "name: a\n",
        "name: [a, {b: [c]}]\n",
        "description: x: y\n",
        "description: >\n  folded\n",
        "type: project\n",
        "type: Project\r",
        "metadata:\n  type: user\n",
        "modified: 2026-13-45\n",
        "last_verified: 2020-01-01\n",
        "- [A](a.md) — hook\n",
        "- [A](a.md) — hook\n",
        "- [B](notes/b.md)\r\n",
        "- [Gone](gone.md) — missing\n",
        "- [Up](../a.md)\n",
        "* [a.md](<a.md>)\n",
        "[[a]] [[notes/b]] [[",
        "]]",
        "```\n",
        "~~~\n",
        "<!--",
        "-->",
        "ghp_0123456789abcdefghijABCDEFGHIJ012345\n",
        "due 2020-01-31, next Friday, 下周五\n",
        "\ufeff",
        "\r\n",
        "\r",
        "\n",
        "\x00",
        "\t",
        "\ud800",
        "\udfff",
        "😀",
        "e\u0301",
        "数据",
        "\u2028",
        "&a [*a]\n",
        "!!python/object:os.system\n",
        "[" * 300,
        "{" * 300,
        "> " * 300 + "x\n",
        "  " * 200 + "- deep\n",
        "x" * 20_000,
    ]
)
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=12)), max_size=24).map("".join)


def _bytes(text: str) -> bytes:
    # Lone surrogates reach the disk as the bytes an editor's buggy encoder would write.
    return text.encode("utf-8", errors="surrogatepass")


@contextmanager
def memory_dir(files: dict[str, str]) -> Iterator[Path]:
    """A fresh memory dir per example (Hypothesis runs many in one test function)."""
    base = Path(tempfile.mkdtemp(prefix="memdir-fuzz-"))
    root = base / "memory"
    try:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(_bytes(text))
        yield root
    finally:
        shutil.rmtree(base)


FILES = st.fixed_dictionaries({"MEMORY.md": TEXT, "a.md": TEXT, "notes/b.md": TEXT})


@FUZZ
@given(files=FILES, editor=TEXT, query=TEXT)
def test_core_never_raises(files: dict[str, str], editor: str, query: str) -> None:
    with memory_dir(files) as root:
        state = DirState(root)
        state.refresh()
        state.lint()
        # The editor's unsaved text (lone surrogates and all: JSON can carry them).
        state.update(root / "a.md", editor)
        state.update(root / "MEMORY.md", editor)
        state.lint()
        state.close(root / "MEMORY.md")
        state.lint()
        parse_index(_bytes(files["MEMORY.md"]).decode("utf-8", "replace"), root / "MEMORY.md")
        parse_index(editor, root / "MEMORY.md")
        load_index(root)
        found = scan(root)
        format_manifest(found.candidates)
        select_lexical(query, found.candidates, recent_tools=(query[:20],))


def _decoded(data: bytes) -> str | None:
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None


def _offset(text: str, line: int, col: int) -> int:
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts[line] + col


def _check_kept(before: str, after: str, ranges: list[tuple[int, int]], rel: str) -> None:
    """Every character of ``before`` outside ``ranges`` is in ``after``, in order."""
    pieces, position = [], 0
    for start, end in sorted(ranges):
        pieces.append(before[position:start])
        position = max(position, end)
    pieces.append(before[position:])
    assert after.startswith(pieces[0]), f"{rel}: text before the first fix lost"
    assert after.endswith(pieces[-1]), f"{rel}: text after the last fix lost"
    at = len(pieces[0])
    for piece in pieces[1:-1]:
        found = after.find(piece, at)
        assert found >= 0, f"{rel}: text between fixes lost: {piece!r}"
        at = found + len(piece)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _fix_once(root: Path) -> tuple[bool, bool]:
    """One ``memdir lint --fix``: checks what it kept; returns (wrote, a fix waits on another)."""
    before = _snapshot(root)
    state = DirState(root)
    state.refresh()
    report = apply_fixes(state.lint().diagnostics)
    after = _snapshot(root)
    ranges: dict[str, list[tuple[int, int]]] = {}
    for diagnostic in report.applied:
        assert diagnostic.fix is not None and diagnostic.fix.safe
        for edit in diagnostic.fix.edits:
            old = _decoded(before.get(edit.rel_path, b""))
            assert old is not None, f"{edit.rel_path}: a file not UTF-8 was rewritten"
            span = edit.span
            ranges.setdefault(edit.rel_path, []).append(
                (
                    _offset(old, span.start_line, span.start_col),
                    _offset(old, span.end_line, span.end_col),
                )
            )
    for rel, data in before.items():
        if rel not in ranges:
            assert after.get(rel) == data, f"{rel}: changed with no fix for it"
            continue
        old, new = _decoded(data), _decoded(after[rel])
        assert old is not None and new is not None
        _check_kept(old, new, ranges[rel], rel)
    event(f"fixes applied: {'some' if report.applied else 'none'}")
    waiting = any(reason.startswith("overlaps") for _, reason in report.skipped)
    return bool(report.written), waiting


@FUZZ
@given(files=FILES)
def test_safe_fixes_keep_text_and_converge(files: dict[str, str]) -> None:
    with memory_dir(files) as root:
        for _ in range(6):
            _wrote, waiting = _fix_once(root)
            if not waiting:
                break
        else:
            raise AssertionError("fixes still waiting on each other after six runs")
        settled = _snapshot(root)
        wrote, waiting = _fix_once(root)
        assert not wrote and not waiting, "a second `memdir lint --fix` changed the memory"
        assert _snapshot(root) == settled
