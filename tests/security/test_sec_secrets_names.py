"""Issue 26, what may be written: names that are one file on macOS or Windows, or none at all.

On main, ``A.md`` beside ``a.md``, the two Unicode forms of ``é.md``, Windows device names
(``CON.md``, ``nul.md``, ``COM1.md``), names ending with a dot or a space and names holding an
invisible character were all created, and lint reported none of them. A memory dir travels with
its repository: on a case-insensitive or normalising file system a checkout keeps one of two
colliding memories. Now the writer refuses to add such a name (a create, a rename, the folders
on the way) and MEM123 reports the ones a directory already has.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from memdir.lint import lint_directory
from memdir.writing.memory_tool import MemdirMemoryTool
from memdir.writing.results import UnsafePathError
from memdir.writing.writer import MemoryWriter
from memhelpers import topic, write_files

NFC = unicodedata.normalize("NFC", "\u00e9t\u00e9.md")
NFD = unicodedata.normalize("NFD", NFC)
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
BODY = topic("note", "a note about the staging deploy and who approves it")


def memory_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    write_files(root, {"MEMORY.md": "- [Deploy](deploy.md) — staging first\n", **files})
    return root


#: (what is there already, the name a create would add, the name it collides with)
COLLISIONS = [
    ("deploy.md", "Deploy.md", "deploy.md"),
    ("deploy.md", "DEPLOY.md", "deploy.md"),
    (NFC, NFD, NFC),
    (NFD, NFC, NFD),
    ("deploy.md", "memory.md", "MEMORY.md"),
    ("notes/a.md", "Notes/b.md", "notes"),
]


@pytest.mark.parametrize(("there", "new", "other"), COLLISIONS)
def test_a_name_colliding_with_a_sibling_is_refused(
    tmp_path: Path, there: str, new: str, other: str
) -> None:
    root = memory_dir(tmp_path, {there: BODY})
    with pytest.raises(UnsafePathError) as refused:
        MemoryWriter(root).create(new, BODY)
    assert refused.value.reason == "collides"
    assert repr(other) in refused.value.detail  # names the name it collides with
    assert not (root / new).exists() or (root / new).samefile(root / other)
    # The memory tool (every face) says why, naming the path.
    result = MemdirMemoryTool(root).run(
        {"command": "create", "path": f"/memories/{new}", "file_text": BODY}
    )
    assert result.is_error and "one name on macOS and Windows" in result.text


UNPORTABLE = [
    "CON.md",
    "nul.md",
    "COM1.md",
    "lpt9.md",
    "aux.notes.md",
    "Con .md",
    "notes./a.md",
    "trailing /a.md",
    *(f"de{char}ploy.md" for char in INVISIBLE),
    "\u3164.md",  # a Hangul filler: a blank that is a letter
]


@pytest.mark.parametrize("name", UNPORTABLE, ids=ascii)
def test_a_device_name_a_trailing_dot_or_an_invisible_character_is_refused(
    tmp_path: Path, name: str
) -> None:
    root = memory_dir(tmp_path, {"deploy.md": BODY})
    with pytest.raises(UnsafePathError) as refused:
        MemoryWriter(root).create(name, BODY)
    assert refused.value.reason == "unportable"
    renamed = MemdirMemoryTool(root).run(
        {"command": "rename", "old_path": "/memories/deploy.md", "new_path": f"/memories/{name}"}
    )
    assert renamed.is_error and "no portable name" in renamed.text
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == [
        "MEMORY.md",
        "deploy.md",
    ]


def test_renames_and_existing_names(tmp_path: Path) -> None:
    root = memory_dir(tmp_path, {"deploy.md": BODY, "plain.md": BODY, "CON.md": BODY})
    writer = MemoryWriter(root)
    with pytest.raises(UnsafePathError, match="one name on macOS and Windows"):
        writer.rename("plain.md", "Deploy.md")
    # Changing only the case of a name is how a collision is fixed: allowed.
    writer.rename("deploy.md", "Deploy.md")
    assert sorted(p.name for p in root.glob("*.md")) == [
        "CON.md",
        "Deploy.md",
        "MEMORY.md",
        "plain.md",
    ]
    # A name already there is left alone: it can be edited, and renamed away.
    writer.str_replace("CON.md", "Body.", "Body, edited.")
    writer.rename("CON.md", "console.md")
    assert (root / "console.md").exists()


def test_lint_reports_each_group_once_naming_the_others(tmp_path: Path) -> None:
    root = memory_dir(
        tmp_path,
        {
            "deploy.md": BODY,
            "Deploy.md": BODY,
            NFC: BODY,
            NFD: BODY,
            "memory.md": BODY,
            "notes/a.md": BODY,
            "Notes/b.md": BODY,
            "CON.md": BODY,
            "nul.md": BODY,
            "dir./c.md": BODY,
            "de\u200bploy-notes.md": BODY,
            "fine.md": BODY,
        },
    )
    found = {d.rel_path: d.message for d in lint_directory(root).diagnostics if d.code == "MEM123"}
    assert sorted(found) == sorted(
        [
            "deploy.md",
            NFC,
            "memory.md",
            "notes",
            "CON.md",
            "nul.md",
            "dir.",
            "de\u200bploy-notes.md",
        ]
    )
    assert "`Deploy.md`" in found["deploy.md"] and "differ only in case" in found["deploy.md"]
    assert "`e\\u0301te\\u0301.md`" in found[NFC] and "Unicode normalisation" in found[NFC]
    assert "`MEMORY.md`" in found["memory.md"] and "`Notes`" in found["notes"]
    assert "device name on Windows" in found["CON.md"] and "ends with a dot" in found["dir."]
    assert "U+200B zero width space" in found["de\u200bploy-notes.md"]
