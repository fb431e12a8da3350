from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.agent.manifest import format_manifest, iso_mtime, manifest_line
from memdir.agent.scan import scan
from memdir.agent.topic import body_head, with_bodies
from memdir.model import MemoryHeader
from memhelpers import topic

MakeDir = Callable[..., Path]


def test_scan_recursive_newest_first_excludes_index(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "old.md": topic("old", "oldest"),
            "sub/mid.md": topic("mid", "middle", "user"),
            "MEMORY.md": "- [Old](old.md)\n",
            "sub/MEMORY.md": "- nested index, also excluded\n",
            "notes.txt": "not markdown",
            "new.md": topic("new", "newest", "reference"),
        }
    )
    result = scan(root)
    assert [h.rel_path for h in result.candidates] == ["new.md", "sub/mid.md", "old.md"]
    assert result.cut_off == ()


def test_scan_leaves_out_what_the_agent_leaves_out(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "kept.md": topic("kept", "kept"),
            "team/shared.md": topic("shared", "kept too"),
            "sub/logs/deep.md": topic("deep", "only the top-level dirs are excluded"),
            ".hidden.md": topic("h", "dot file"),
            ".git/notes.md": topic("g", "dot dir"),
            "sub/.cache/x.md": topic("c", "dot dir at any depth"),
            "logs/run.md": topic("l", "agent logs"),
            "Sessions/s.md": topic("s", "any case"),
            "proposals. /p.md": topic("p", "trailing dots and spaces ignored"),
        }
    )
    found = sorted(h.rel_path for h in scan(root).candidates)
    assert found == ["kept.md", "sub/logs/deep.md", "team/shared.md"]


def test_scan_cap_reports_cut_off(make_dir: MakeDir) -> None:
    files = {f"m{i:03d}.md": topic(f"m{i}", f"memory {i}") for i in range(205)}
    root = make_dir(files)
    result = scan(root)
    assert len(result.candidates) == 200
    assert [h.rel_path for h in result.cut_off] == [f"m{i:03d}.md" for i in range(4, -1, -1)]


def test_scan_survives_hostile_entries(make_dir: MakeDir, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(topic("secret", "must never be read"))
    root = make_dir(
        {
            "good.md": topic("good", "fine"),
            "latin1.md": b"---\nname: x\ndescription: caf\xe9\ntype: user\n---\n",
            "binary.md": b"\x00\x00\x00",
        }
    )
    (root / "escape.md").symlink_to(outside / "secret.md")
    (root / "escape-dir").symlink_to(outside)
    (root / "loop.md").symlink_to(root / "loop2.md")
    (root / "loop2.md").symlink_to(root / "loop.md")
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "inside-link.md").symlink_to(root / "good.md")
    (root / "self").symlink_to(root)
    unreadable = root / "locked"
    unreadable.mkdir()
    (unreadable / "x.md").write_text(topic("x", "x"))
    result = scan(root)
    paths = {h.rel_path for h in result.candidates}
    assert "escape.md" not in paths
    assert not any("secret" in p for p in paths)
    assert {"good.md", "latin1.md", "binary.md", "inside-link.md", "locked/x.md"} <= paths
    reasons = {s.rel_path: s.reason for s in result.skipped}
    assert reasons["escape.md"] == "symlink leads outside the memory dir"
    assert reasons["escape-dir"] == "symlink leads outside the memory dir"
    assert "loop.md" in reasons and "dangling.md" in reasons
    latin = next(h for h in result.candidates if h.rel_path == "latin1.md")
    assert latin.description == "caf\ufffd"


def test_scan_unreadable_dir(make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_dir({"a.md": topic("a", "a"), "closed/b.md": topic("b", "b")})
    real_scandir = os.scandir

    def deny(path: str | os.PathLike[str]):  # type: ignore[no-untyped-def]
        if Path(path).name == "closed":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr("memdir.agent.scan.os.scandir", deny)
    result = scan(root)
    assert [h.rel_path for h in result.candidates] == ["a.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [
        ("closed", "cannot list directory: Permission denied")
    ]


def test_scan_file_deleted_mid_scan(make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_dir({"a.md": topic("a", "a"), "b.md": topic("b", "b")})
    import memdir.agent.scan as scan_module

    real = scan_module.load_header

    def vanish(path: Path, base: Path) -> MemoryHeader:
        if path.name == "a.md":
            path.unlink()
        return real(path, base)

    monkeypatch.setattr(scan_module, "load_header", vanish)
    result = scan(root)
    assert [h.rel_path for h in result.candidates] == ["b.md"]
    assert [s.rel_path for s in result.skipped] == ["a.md"]


def test_bodies_are_read_for_the_selector_as_the_prefetch_would_inject_them(
    make_dir: MakeDir, tmp_path: Path
) -> None:
    long_body = "".join(f"line {n}\n" for n in range(300))
    root = make_dir(
        {
            "plain.md": topic("plain", "a plain memory", body="First line.\n\nSecond.\n"),
            "bare.md": "No frontmatter at all.\n",
            "long.md": topic("long", "a long memory", body=long_body),
            "wide.md": topic("wide", "a wide memory", body="x" * 5000 + "\nnever read\n"),
            "binary.md": b"---\nname: bin\n---\n\x00\x01",
        }
    )
    headers = {h.rel_path: h for h in scan(root).candidates}
    assert all(h.body is None for h in headers.values())  # the scan itself never reads them
    bodies = {h.rel_path: h.body for h in with_bodies(list(headers.values()))}
    assert bodies["plain.md"] == "First line.\n\nSecond.\n"
    assert bodies["bare.md"] == "No frontmatter at all.\n"
    # The injection caps: 200 lines of the file, frontmatter included, at most 4096 bytes.
    assert bodies["long.md"] == "".join(f"line {n}\n" for n in range(195)).rstrip("\n")
    assert bodies["wide.md"] == ""  # a line crossing the byte cap is left out whole
    assert bodies["binary.md"] == ""
    # Read once: a header that has its body keeps it; one deleted since reads as empty.
    read = with_bodies(list(headers.values()))
    assert with_bodies(read) == read
    (root / "plain.md").unlink()
    assert body_head(root / "plain.md") == ""
    assert body_head(tmp_path) == ""  # a directory is not read


def test_manifest_line_format() -> None:
    header = MemoryHeader(
        Path("/m/a.md"),
        "release-merge-freeze.md",
        1784106720.0,
        10,
        "n",
        "trunk is frozen",
        "project",
    )
    assert manifest_line(header) == (
        "- [project] release-merge-freeze.md (2026-07-15T09:12:00.000Z): trunk is frozen"
    )
    bare = MemoryHeader(Path("/m/b.md"), "sub/b.md", 1784106720.1239, 1, None, None, None)
    assert manifest_line(bare) == "- sub/b.md (2026-07-15T09:12:00.123Z)"
    assert format_manifest([header, bare]).count("\n") == 1


def test_iso_mtime_truncates_milliseconds_like_javascript() -> None:
    assert iso_mtime(0.9999) == "1970-01-01T00:00:00.999Z"
    assert iso_mtime(1_700_000_000.5) == "2023-11-14T22:13:20.500Z"
