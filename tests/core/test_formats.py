"""Other agents' memory directories recognised (``memdir.agent.formats``), Claude Code's never."""

from __future__ import annotations

from pathlib import Path

import pytest
from memdir.agent.formats import (
    FORCE_FLAG,
    FORCE_SETTING,
    Listing,
    declined,
    notice,
    read_listing,
    recognise,
    recognise_dir,
)
from memdir.config import settings_from_mapping
from other_formats import CLAUDE_CODE_LOOKALIKES, OTHER_FORMATS, make_format_dir


@pytest.mark.parametrize("key", sorted(OTHER_FORMATS))
def test_each_other_format_is_recognised_with_a_reason(tmp_path: Path, key: str) -> None:
    root = make_format_dir(tmp_path / key, OTHER_FORMATS[key])
    found = recognise_dir(root)
    assert found is not None and found.key == key
    sentence = notice(found)
    assert sentence.startswith(f"looks like {found.name}, not Claude Code's (")
    assert "nothing checked, nothing written" in sentence
    assert FORCE_FLAG in sentence and FORCE_SETTING in sentence
    assert "\n" not in sentence
    assert declined(root) == sentence
    assert declined(root, forced=True) is None


@pytest.mark.parametrize("case", sorted(CLAUDE_CODE_LOOKALIKES))
def test_claude_code_directories_are_never_recognised(tmp_path: Path, case: str) -> None:
    root = make_format_dir(tmp_path / "mem", CLAUDE_CODE_LOOKALIKES[case])
    assert recognise_dir(root) is None
    assert declined(root) is None


def test_a_missing_directory_is_claude_codes(tmp_path: Path) -> None:
    assert recognise_dir(tmp_path / "nowhere") is None


def test_hermes_is_recognised_even_after_a_fix_added_frontmatter_to_user_md(
    tmp_path: Path,
) -> None:
    """memdir's old ``--fix`` wrote a skeleton into Hermes' USER.md: the § index still tells."""
    files = dict(OTHER_FORMATS["hermes"])
    files["USER.md"] = (
        "---\nname: user\ndescription: about me\ntype: user\n---\n" + files["USER.md"]
    )
    found = recognise_dir(make_format_dir(tmp_path / "h", files))
    assert found is not None and found.key == "hermes"


def test_recognise_is_a_function_of_the_listing() -> None:
    listing = Listing(frozenset({"soul.md", "identity.md", "memory.md"}))
    found = recognise(listing)
    assert found is not None and found.key == "openclaw"
    assert "SOUL.md" in found.reason and "IDENTITY.md" in found.reason
    assert recognise(Listing(frozenset({"soul.md"}))) is None


def test_claude_frontmatter_wins_over_a_name_signature() -> None:
    topic = "---\nname: x\ndescription: y\ntype: project\n---\n"
    names = frozenset({"projectbrief.md", "activecontext.md", "progress.md", "memory.md"})
    heads = {"projectbrief.md": topic, "activecontext.md": topic, "progress.md": "# notes"}
    assert recognise(Listing(names, {}, heads)) is None
    assert recognise(Listing(names, {}, {})) is not None


def test_the_listing_does_not_follow_links_out(tmp_path: Path) -> None:
    outside = make_format_dir(tmp_path / "outside", OTHER_FORMATS["hermes"])
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    (root / "memory").symlink_to(make_format_dir(tmp_path / "logs", OTHER_FORMATS["dated-logs"]))
    listing = read_listing(root)
    assert listing.heads == {} and listing.folders == {}
    assert recognise(listing) is None


def test_the_setting_forces_the_check() -> None:
    assert settings_from_mapping({}).any_format is False
    assert settings_from_mapping({"any_format": True}).any_format is True
    assert settings_from_mapping({"anyFormat": True}).any_format is True
    bad = settings_from_mapping({"any_format": "yes"})
    assert bad.any_format is False and bad.errors


def test_notes_kept_by_hand_are_recognised_only_when_every_note_lacks_frontmatter() -> None:
    """An index and hand-kept notes (none opens with ``---``) are not the agent's auto memory; a
    single note with frontmatter, fewer than three notes, a note not read, or no index, and the
    directory is checked as Claude Code's."""
    plain = "# Notes\n\nKept by hand.\n"
    names = frozenset({"memory.md", "a.md", "b.md", "c.md"})
    heads = {"memory.md": "- [A](a.md): a\n", "a.md": plain, "b.md": plain, "c.md": plain}
    found = recognise(Listing(names, {}, heads))
    assert found is not None and found.key == "hand-kept"
    assert "none of its 3 notes has the frontmatter" in notice(found)
    # Any frontmatter block, even one without the agent's keys, makes it Claude Code's.
    assert recognise(Listing(names, {}, {**heads, "b.md": "---\ntitle: B\n---\n"})) is None
    assert recognise(Listing(names - {"c.md"}, {}, heads)) is None
    assert recognise(Listing(names, {}, {k: v for k, v in heads.items() if k != "c.md"})) is None
    assert recognise(Listing(names - {"memory.md"}, {}, heads)) is None
