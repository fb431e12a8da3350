"""Issue 26, what may be written: the one secret detector (MEM110, the memory tool's refusals)
finds every kind of credential in the labelled corpus and nothing in ordinary memory prose.

The attack run on main stored 32 of 71 kinds of realistic credentials and never caught
``api_key: <40 hex digits>`` (0 of 2,000); it also flagged prose such as "`py_compile` passed:
…" and ``primary_key: user_id_2``.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from memdir.lint import lint_directory
from memdir.secrets import find_secrets
from sec_secrets_corpus import HEX, NEGATIVES, POSITIVES, Positive, rand

REPO = Path(__file__).resolve().parents[2]
#: Made-up credentials of each kind checked (seeded: the same ones every run).
SAMPLES = 25


def covered(text: str, value: str) -> bool:
    """Some finding spans the whole credential (a URL's from after its ``https://``)."""
    value = value.removeprefix("https://")
    start = text.find(value)
    assert start >= 0
    end = start + len(value)
    return any(s.start <= start and s.end >= end for s in find_secrets(text))


@pytest.mark.parametrize("positive", POSITIVES, ids=lambda p: p.label)
def test_every_kind_of_credential_is_found(positive: Positive) -> None:
    missed = []
    for seed in range(SAMPLES):
        text, value = positive.make(random.Random(f"{positive.label}/{seed}"))
        if not covered(text, value):
            missed.append(text)
        for found in find_secrets(text):
            # What a finding shows is its public prefix, never the secret.
            secret = text[found.start : found.end]
            assert secret not in found.label and secret[-8:] not in found.label
    assert missed == []


def test_an_api_key_of_forty_hex_digits_is_found_every_time() -> None:
    rng = random.Random("api_key hex")
    texts = [f"api_key: {rand(rng, 40, HEX)}" for _ in range(2000)]
    assert [t for t in texts if not covered(t, t.removeprefix("api_key: "))] == []


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_memory_prose_is_not_a_secret(text: str) -> None:
    assert [(s.kind, text[s.start : s.end]) for s in find_secrets(text)] == []


def test_no_false_alarm_in_the_example_directories() -> None:
    files = [p for p in (REPO / "examples").rglob("*") if p.is_file()]
    assert len(files) > 10
    found = {
        p.relative_to(REPO).as_posix(): [s.kind for s in find_secrets(p.read_text("utf-8"))]
        for p in files
    }
    assert {rel: kinds for rel, kinds in found.items() if kinds} == {}
    for directory in {p.parent for p in files if p.suffix == ".md"}:
        codes = [d.code for d in lint_directory(directory).diagnostics]
        assert "MEM110" not in codes, directory


def test_lint_and_the_memory_tool_use_the_same_detector(tmp_path: Path) -> None:
    # Lint reports what the writes refuse: one of each kind the old detector missed (MEM110 a
    # key of a known format, MEM130, a preview rule, a hex value under an `api_key` name).
    body = "\n".join(
        p.make(random.Random(p.label))[0].replace("\n", " ")
        for p in POSITIVES
        if p.label
        in ("Telegram bot token", "Discord bot token", "PyPI token", "api_key with 40 hex")
    )
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [Bots](bots.md) — the chat bots\n", encoding="utf-8")
    topic = "---\nname: bots\ndescription: the chat bots and where they post\ntype: project\n---\n"
    (root / "bots.md").write_text(topic + body + "\n", encoding="utf-8")
    (root / "memdir.toml").write_text("preview = true\n", encoding="utf-8")
    found = [d for d in lint_directory(root).diagnostics if d.code in ("MEM110", "MEM130")]
    assert [d.code for d in found] == ["MEM110", "MEM110", "MEM110", "MEM130"], [
        d.message for d in found
    ]
    assert all(body.split("\n")[i][-12:] not in d.message for i, d in enumerate(found))
