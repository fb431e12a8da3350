"""Issue 26, the hook's transcript: ``transcript_path`` comes from stdin, so it may name a FIFO,
a device, a symlink or a huge file. The hook reads only a regular file's tail, never blocks,
never follows a link as the last component, and parses each line within bounds; whatever it is
given, the prompt still gets its memories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from memdir.extract.transcript import TAIL_MAX_BYTES, read_transcript
from memdir.recall.surface import Session
from memdir.textio import read_tail
from sec_hook_support import DEPLOY_BODY, Scratch, read_record

#: Address space for a hook run: ample for memdir (about 100 MB in use), far below what reading
#: a multi-gigabyte transcript line would take.
HOOK_MEMORY = 1 << 30


def session_read(scratch: Scratch) -> set[str]:
    """The files the saved session counts as read by the agent."""
    files = list((scratch.states / "hook-sessions").glob("*.json"))
    assert len(files) == 1, files
    return Session.load(files[0]).read


@pytest.mark.parametrize("kind", ["fifo", "urandom", "zero", "directory"])
def test_special_file_as_transcript_neither_hangs_nor_blocks_the_memories(
    tmp_path: Path, kind: str
) -> None:
    scratch = Scratch(tmp_path)
    if kind == "fifo":
        transcript: Path = tmp_path / "transcript.fifo"
        os.mkfifo(transcript)  # nobody ever writes: opening it for reading would block for good
    elif kind == "directory":
        transcript = tmp_path / "transcript.d"
        transcript.mkdir()
    else:
        transcript = Path("/dev") / kind
    done = scratch.run(scratch.stdin(transcript=transcript), memory_limit=HOOK_MEMORY)
    assert DEPLOY_BODY.strip() in scratch.context(done)
    [line] = scratch.log_lines()
    assert "cannot read transcript" in line and "not a regular file" in line


def test_symlinked_transcript_is_not_followed(tmp_path: Path) -> None:
    # Claude Code writes its transcript as a plain file; a link there is not its doing, and the
    # hook does not read through it (what the link's target says is not taken as the session's).
    scratch = Scratch(tmp_path)
    real = tmp_path / "elsewhere.jsonl"
    real.write_text(read_record(scratch.memory / "deploy.md") + "\n", encoding="utf-8")
    link = tmp_path / "transcript.jsonl"
    link.symlink_to(real)
    done = scratch.run(scratch.stdin(transcript=link))
    assert DEPLOY_BODY.strip() in scratch.context(done)
    [line] = scratch.log_lines()
    assert "cannot read transcript" in line and "symbolic link" in line


def test_a_linked_directory_above_the_transcript_is_fine(tmp_path: Path) -> None:
    # ~/.claude itself may be a link (dotfile managers): only the last component must be plain.
    scratch = Scratch(tmp_path)
    (tmp_path / "real-projects").mkdir()
    (tmp_path / "projects").symlink_to(tmp_path / "real-projects", target_is_directory=True)
    transcript = tmp_path / "projects" / "t.jsonl"
    transcript.write_text(read_record(scratch.memory / "deploy.md") + "\n", encoding="utf-8")
    done = scratch.run(scratch.stdin(transcript=transcript))
    assert scratch.context(done) == ""  # the agent read deploy.md: not injected again
    assert session_read(scratch) == {str((scratch.memory / "deploy.md").resolve())}


def test_a_multi_gigabyte_line_costs_only_the_tail(tmp_path: Path) -> None:
    # 3 GiB of NUL bytes without a newline (sparse: nothing on disk), then the agent's Read of
    # deploy.md. Read line by line, the first line alone is 3 GiB; the hook reads the tail.
    scratch = Scratch(tmp_path)
    transcript = tmp_path / "t.jsonl"
    with transcript.open("wb") as handle:
        handle.truncate(3 << 30)
        handle.seek(3 << 30)
        handle.write(("\n" + read_record(scratch.memory / "deploy.md") + "\n").encode())
    done = scratch.run(scratch.stdin(transcript=transcript), memory_limit=HOOK_MEMORY)
    assert scratch.context(done) == ""
    assert session_read(scratch) == {str((scratch.memory / "deploy.md").resolve())}
    assert scratch.log_lines() == []


def test_deeply_nested_json_in_a_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    scratch = Scratch(tmp_path)
    named = json.dumps(str(scratch.memory))
    deep = "[" * 200_000 + named + "]" * 200_000
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        deep + "\n" + read_record(scratch.memory / "deploy.md") + "\n", encoding="utf-8"
    )
    done = scratch.run(scratch.stdin(transcript=transcript))
    assert (done.returncode, done.stdout) == (0, b"")
    assert session_read(scratch) == {str((scratch.memory / "deploy.md").resolve())}
    assert scratch.log_lines() == []


def test_read_transcript_reads_whole_lines_of_the_tail_only(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 5000}})
    last = json.dumps({"type": "user", "message": {"role": "user", "content": "recent"}})
    path.write_text(first + "\n" + last + "\n", encoding="utf-8")
    # A window inside the first line: that line is left out, not parsed half.
    tail = read_transcript(path, max_bytes=len(last) + 100)
    assert tail.partial and not tail.skipped
    assert [r.text for r in tail.records] == ["recent"]
    # A window starting exactly at a line start keeps that line.
    exact = read_transcript(path, max_bytes=len(last) + 1)
    assert [r.text for r in exact.records] == ["recent"]
    whole = read_transcript(path)
    assert not whole.partial and [r.text for r in whole.records] == ["x" * 5000, "recent"]


def test_read_tail_is_bounded_on_a_huge_file(tmp_path: Path) -> None:
    path = tmp_path / "big"
    with path.open("wb") as handle:
        handle.truncate(1 << 32)  # 4 GiB, sparse
        handle.write(b"\n")
    data, stat, partial = read_tail(path, TAIL_MAX_BYTES)
    assert partial and stat.st_size == 1 << 32
    assert len(data) <= TAIL_MAX_BYTES


@pytest.mark.parametrize("follow", [True, False])
def test_read_tail_refuses_special_files_and_links_when_asked(tmp_path: Path, follow: bool) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO"):
        read_tail(fifo, 100, follow_links=follow)
    real = tmp_path / "real"
    real.write_bytes(b"a\nb\n")
    link = tmp_path / "link"
    link.symlink_to(real)
    if follow:
        assert read_tail(link, 100)[0] == b"a\nb\n"
    else:
        with pytest.raises(OSError, match="symbolic link"):
            read_tail(link, 100, follow_links=False)
