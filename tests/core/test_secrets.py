"""memdir.secrets: the one detector (MEM110, the memory tool's refusal) and the one redaction.

Covers the token forms added for issue 18 (Slack webhooks, npm, Hugging Face, Twilio, SendGrid),
keys split by invisible characters, and messages and fix titles that quote memory text.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.config import Settings
from memdir.faces.cli import main
from memdir.lint import lint_directory
from memdir.lint.state import DirState
from memdir.project.lookup import Project
from memdir.secrets import REDACTED, find_secrets, redact
from memdir.writing.memory_tool import MemdirMemoryTool
from memhelpers import git_project, write_files

MakeDir = Callable[[dict[str, str | bytes]], Path]
REPO = Path(__file__).resolve().parents[2]

#: (kind, token) in the formats the vendors issue (random parts made up).
NEW_FORMS = [
    (
        "Slack webhook URL",
        "https://hooks.slack.com/services/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",
    ),
    (
        "Slack webhook URL",
        "https://hooks.slack.com/workflows/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",
    ),
    ("npm token", "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"),
    ("Hugging Face token", "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH"),
    ("Hugging Face org token", "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"),
    ("Twilio API key", "SK9b4cc552783500ace5414a1ed3e9fd1a"),
    ("SendGrid API key", "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"),
]


def topic(body: str) -> str:
    return (
        "---\nname: deploy\ndescription: the staging deploy steps and who approves them\n"
        f"type: project\n---\n{body}"
    )


@pytest.mark.parametrize(("kind", "token"), NEW_FORMS)
def test_new_token_forms_are_found_linted_and_refused(
    make_dir: MakeDir, tmp_path: Path, kind: str, token: str
) -> None:
    text = f"The alert hook is {token} for now."
    [found] = find_secrets(text)
    assert found.kind == kind
    secret = token.removeprefix("https://")
    assert text[found.start : found.end] == secret
    assert secret not in found.label and secret[len(found.label) :] not in found.label
    root = make_dir({"MEMORY.md": "- [Deploy](deploy.md) — steps\n", "deploy.md": topic(text)})
    diagnostics = lint_directory(root).diagnostics
    assert [d.code for d in diagnostics] == ["MEM110"]
    assert secret not in diagnostics[0].message
    # One detector: the memory tool refuses the same text for every face.
    (tmp_path / "tool").mkdir()
    result = MemdirMemoryTool(tmp_path / "tool").run(
        {"command": "create", "path": "/memories/k.md", "file_text": text}
    )
    assert result.is_error and f"looks like a secret ({kind})" in result.text


@pytest.mark.parametrize(
    "text",
    [
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "post to https://hooks.slack.com/services/<your-webhook> when it fails",
        "npm_ci is the script name; npm_config_cache too",
        "hf_hub_download(repo_id, filename) fetches the weights",
        "the TASK9b4cc552783500ace5414a1ed3e9fd1a id and SKU SK-1234",
        "SG.xxxxxxxxxxxxxxxxxxxxxx.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "a_hf_abcdefghijklmnopqrstuvwxyzabcdefgh glued to a longer word",
    ],
)
def test_documentation_forms_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


def test_no_finding_in_the_examples_and_the_fixtures() -> None:
    roots = [REPO / "examples", REPO / "tests" / "fixtures", REPO / "client-vscode/e2e/fixtures"]
    files = [p for root in roots for p in root.rglob("*.md")]
    assert files
    found = {
        p.relative_to(REPO).as_posix(): [s.kind for s in find_secrets(p.read_text("utf-8"))]
        for p in files
    }
    assert {rel: kinds for rel, kinds in found.items() if kinds} == {}


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
KEY = "sk-ant-api03-Zx9Qw3Er5Ty7Ui1Op2As4Df6Gh8Jk0LzXcVbNm"


@pytest.mark.parametrize("char", INVISIBLE)
def test_a_key_split_by_an_invisible_character_is_found_where_it_is(char: str) -> None:
    split = KEY[:20] + char + KEY[20:30] + char * 2 + KEY[30:]
    # Invisible characters before the key shift nothing: the span is the original one.
    text = f"{char}note{char}: the staging key is {split}{char} for now"
    [found] = find_secrets(text)
    assert found.kind == "Anthropic API key"
    assert text[found.start : found.end] == split
    assert redact(text) == f"{char}note{char}: the staging key is {REDACTED}{char} for now"


def test_split_assignments_and_several_keys_map_back(make_dir: MakeDir) -> None:
    token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
    text = f"a\u200bb TOKEN = Xk9mQ2\u200bvL8pZ3aB7qW4 and {token[:10]}\u2060{token[10:]}\n"
    spans = [text[s.start : s.end] for s in find_secrets(text)]
    assert spans == ["Xk9mQ2\u200bvL8pZ3aB7qW4", f"{token[:10]}\u2060{token[10:]}"]
    root = make_dir({"MEMORY.md": "- [Deploy](deploy.md) — steps\n", "deploy.md": topic(text)})
    (root / "memdir.toml").write_text("preview = true\n", encoding="utf-8")
    found = [d for d in lint_directory(root).diagnostics if d.code in ("MEM110", "MEM130")]
    assert [(d.code, d.span.start_line, d.span.start_col) for d in found] == [
        ("MEM130", 5, 12),
        ("MEM110", 5, 36),
    ]


def test_redact_hides_known_values_and_detected_secrets_once() -> None:
    key = "local-key-0123456789"
    text = f"401: invalid key {key}; also {KEY} and {KEY[:12]}"
    assert redact(text, [key, None, "short"]) == (
        f"401: invalid key {REDACTED}; also {REDACTED} and {KEY[:12]}"
    )
    # A known value inside a detected token: one redaction, not a broken token.
    assert redact(f"x {KEY} y", [KEY[15:30]]) == f"x {REDACTED} y"
    assert redact("nothing here", ["nothing h", "nothing"]) == f"{REDACTED}ere"


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_a_duplicate_entry_fix_title_never_repeats_a_secret(
    make_dir: MakeDir, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    token = "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    index = f"- [Deploy](deploy.md) — steps\n- [Deploy again](deploy.md) — publish with {token}\n"
    root = make_dir({"MEMORY.md": index, "deploy.md": topic("Steps.\n")})
    [duplicate] = [d for d in lint_directory(root).diagnostics if d.code == "MEM006"]
    assert duplicate.fix is not None
    assert token not in duplicate.fix.title and REDACTED in duplicate.fix.title
    main(["lint", str(root), "--format", fmt])
    out = capsys.readouterr().out
    assert "MEM006" in out and "MEM110" in out
    assert token not in out and token[4:] not in out
    if fmt != "text":
        json.loads(out)


GITHUB = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5c"
AWS = "AKIAQ4ZRT7XW2PLM9KDB"


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_no_message_or_fix_title_repeats_a_secret_it_quotes(
    make_dir: MakeDir, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    # Each finding quotes memory text: a dangling entry's target, an unknown type's value.
    index = f"- [Deploy](deploy.md) — steps\n- [Keys]({AWS}.md) — where the keys live\n"
    typed = topic("Steps.\n").replace("type: project", f"type: {GITHUB}")
    root = make_dir({"MEMORY.md": index, "deploy.md": typed})
    found = lint_directory(root).diagnostics
    quoting = [d for d in found if d.code != "MEM110" and REDACTED in d.message]
    assert len(quoting) >= 2, [d.message for d in found]
    for d in found:
        assert GITHUB not in d.message and AWS not in d.message
        if d.fix is not None:
            assert GITHUB not in d.fix.title and AWS not in d.fix.title
    main(["lint", str(root), "--format", fmt])
    shown = " ".join(_shown_texts(json.loads(capsys.readouterr().out)))
    assert f"dangling link: {REDACTED}.md" in shown and f"unknown type `{REDACTED}`" in shown
    # The fix that creates the dangling entry's file still names it in its edit, as it must.
    assert GITHUB[4:] not in shown and AWS[4:] not in shown


def _shown_texts(data: object) -> list[str]:
    """Every message and fix title in JSON or SARIF output (what a person reads)."""
    if isinstance(data, list):
        return [t for item in data for t in _shown_texts(item)]
    if not isinstance(data, dict):
        return []
    texts: list[str] = []
    for key, value in data.items():
        if key in ("message", "title", "description"):
            texts.append(json.dumps(value))
        texts.extend(_shown_texts(value))
    return texts


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_citation_finding_never_repeats_a_secret_it_cites(tmp_path: Path) -> None:
    project = git_project(tmp_path, {"src/app/cards.py": "def charge_card(order):\n    pass\n"})
    root = tmp_path / "memory"
    body = f"See `src/app/{GITHUB}.py` and `cards.{GITHUB}()`.\n"
    write_files(root, {"MEMORY.md": "- [Deploy](deploy.md) — steps\n", "deploy.md": topic(body)})
    state = DirState(root, Settings(preview=True), Project.load(project, root))
    state.refresh()
    cited = {d.code: d.message for d in state.lint().diagnostics if d.code in ("MEM117", "MEM118")}
    assert cited["MEM117"].startswith(f"`src/app/{REDACTED}.py` does not exist")
    assert cited["MEM118"].startswith(f"`cards.{REDACTED}()` appears nowhere")
    assert not any(GITHUB[4:] in message for message in cited.values())
