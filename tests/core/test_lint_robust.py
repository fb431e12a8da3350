"""Lint never raises on bad input: random bytes, odd encodings, huge files, links, loops."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memdir.config import Settings
from memdir.lint import DirState
from memdir.secrets import find_secrets
from memdir.textio import MAX_PARSE_BYTES

MakeDir = Callable[..., Path]

# Pieces that steer random text into the interesting corners of the parsers.
FRAGMENTS = st.sampled_from(
    [
        "---\n",
        "name: a\n",
        "description: x: y\n",
        "type: Project\n",
        "metadata:\n  type: user\n",
        "modified: 2026-13-45\n",
        "- [A](a.md) — hook\n",
        "- [B](../b.md)\n",
        "[[",
        "]]",
        "```\n",
        "<!--",
        "-->",
        "sk-ant-",
        "password=",
        "\ufeff",
        "\r\n",
        "\x00",
        "😀",
        "数据",
        "\t",
        "&a [*a]\n",
        "!!python/object:os.system\n",
    ]
)
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=30).map("".join)


def lint_state(root: Path) -> DirState:
    state = DirState(root)
    state.refresh()
    state.lint()
    return state


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(topic_bytes=st.binary(max_size=600), index_bytes=st.binary(max_size=300))
def test_random_bytes_never_raise(
    make_dir: MakeDir, topic_bytes: bytes, index_bytes: bytes
) -> None:
    root = make_dir({"a.md": topic_bytes, "MEMORY.md": index_bytes})
    for diagnostic in lint_state(root).lint().diagnostics:
        assert diagnostic.span.start_line >= 0 and diagnostic.span.start_col >= 0


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(topic_text=TEXT, index_text=TEXT)
def test_random_text_never_raises_on_disk_or_in_the_editor(
    make_dir: MakeDir, topic_text: str, index_text: str
) -> None:
    root = make_dir(
        {
            "a.md": topic_text.encode("utf-8", "surrogatepass"),
            "MEMORY.md": index_text.encode("utf-8", "surrogatepass"),
        }
    )
    state = lint_state(root)
    state.update("b.md", topic_text)
    state.update("MEMORY.md", index_text)
    for diagnostic in state.lint().diagnostics:
        if diagnostic.fix is not None:
            assert diagnostic.fix.title


@given(TEXT)
def test_find_secrets_never_raises_and_stays_in_range(text: str) -> None:
    for secret in find_secrets(text):
        assert 0 <= secret.start < secret.end <= len(text)
        assert text[secret.start : secret.end] not in secret.label


#: One token of each kind find_secrets knows, as a memory would hold it.
SECRETS = [
    "sk-ant-api03-Zx9Qw3Er5Ty7Ui1Op2As4Df6Gh8Jk0LzXcVbNm",
    "sk-proj-Zx9Qw3Er5Ty7Ui1Op2As4Df6Gh8Jk0LzXcVbNm",
    "sk-Zx9Qw3Er5Ty7Ui1Op2As4Df6Gh8Jk0LzXcVbNm1Qa2",
    "AKIAZX9QW3ER5TY7UI1O",
    "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b",
    "github_pat_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3kL5mN7pQ9",
    "glpat-aB3dE5fG7hJ9kL1mN3pQ",
    "xoxb-1234567890-aB3dE5fG7h",
    "sk_live_aB3dE5fG7hJ9kL1mN3pQ",
    "AIzaSyaB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3",  # 39 characters, as issued
    "eyJhbGciOiJIUzI1.eyJzdWIiOiIx.aB3dE5fG7hJ9",
    "-----BEGIN RSA PRIVATE KEY-----",
    "postgres://report:Xk9mQ2vL8pZ3aB7@db:5432",
]
#: Values found by the credential's name they are assigned to: MEM130, a preview rule.
NAMED_SECRETS = [
    "Password = Xk9mQ2vL8pZ3aB7qW4",
    "API_TOKEN: 'Xk9mQ2vL8pZ3aB7qW4'",
    '"client_secret": "Xk9mQ2vL8pZ3aB7qW4"',
    "Credential=>Xk9mQ2vL8pZ3aB7qW4",
    "pwd:=Xk9mQ2vL8pZ3aB7qW4",
]


@pytest.mark.parametrize(
    ("secret", "code"),
    [*((s, "MEM110") for s in SECRETS), *((s, "MEM130") for s in NAMED_SECRETS)],
)
def test_lint_finds_each_kind_of_secret_alone(make_dir: MakeDir, secret: str, code: str) -> None:
    # In a file lint reads from disk with the usual frontmatter: the path nearly every file takes.
    text = (
        "---\nname: deploy\ndescription: the staging deploy steps and who approves them\n"
        f"type: project\n---\nThe staging value is {secret} for now.\n"
    )
    assert find_secrets(text), secret
    files = {"MEMORY.md": "- [Deploy](deploy.md) — steps\n", "deploy.md": text}
    root = make_dir(files)
    state = DirState(root, Settings(preview=True))
    state.refresh()
    codes = [d.code for d in state.lint().diagnostics]
    assert codes == [code], (secret, codes)
    # Off by default, the preview rule says nothing.
    codes = [d.code for d in lint_state(root).lint().diagnostics]
    assert codes == ([code] if code == "MEM110" else []), (secret, codes)


def test_huge_file_is_linted_from_its_first_2mb(make_dir: MakeDir) -> None:
    head = (
        "---\nname: big\ndescription: a very large log pasted into memory by mistake\n"
        "type: project\n---\n"
    )
    root = make_dir({"MEMORY.md": "- [Big](big.md) — log\n", "big.md": head + "x" * 100 + "\n"})
    with (root / "big.md").open("a", encoding="utf-8") as handle:
        chunk = ("y" * 1023 + "\n") * 1024
        for _ in range(3):
            handle.write(chunk)
    [found] = [d for d in lint_state(root).lint().diagnostics if d.code == "MEM106"]
    assert f"lint read the first {MAX_PARSE_BYTES:,}" in found.message


def test_symlink_loops_and_broken_links(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": "", "a.md": "---\nname: a\n---\n"})
    (root / "loop").symlink_to(root)
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "inside.md").symlink_to(root / "a.md")
    found = lint_state(root).lint().diagnostics
    assert any(d.code == "MEM114" and d.rel_path == "dangling.md" for d in found)


def test_unlistable_subdirectory(make_dir: MakeDir) -> None:
    root = make_dir({"MEMORY.md": "", "sub/a.md": "x"})
    os.chmod(root / "sub", 0)
    try:
        state = lint_state(root)  # root can still list it; others get MEM114, never a crash
        assert state.lint() is not None
    finally:
        os.chmod(root / "sub", 0o755)


def test_index_that_is_a_directory_or_binary(make_dir: MakeDir) -> None:
    root = make_dir({"a.md": "---\nname: a\n---\n"})
    (root / "MEMORY.md").mkdir()
    assert lint_state(root).lint() is not None
    (root / "MEMORY.md").rmdir()
    (root / "MEMORY.md").write_bytes(b"\x00\x01\x02binary")
    found = lint_state(root).lint().diagnostics
    assert any(d.code == "MEM113" and d.rel_path == "MEMORY.md" for d in found)


def test_a_byte_order_mark_hides_no_frontmatter(tmp_path: Path) -> None:
    # The agent drops a BOM before it looks for frontmatter; so must lint (no MEM101 here).
    body = "---\nname: bom\ndescription: a memory saved by an editor that writes a BOM\n"
    (tmp_path / "bom.md").write_bytes(b"\xef\xbb\xbf" + (body + "type: user\n---\nx\n").encode())
    (tmp_path / "MEMORY.md").write_text("- [BOM](bom.md) — a hook\n", encoding="utf-8")
    assert [d.code for d in lint_state(tmp_path).lint().diagnostics] == []
