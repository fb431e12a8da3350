from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memdir import constants as C
from memdir.recall.surface import (
    Session,
    SurfacedMemory,
    age_text,
    cut_for_injection,
    memory_header,
    render_attachment,
    staleness_text,
    surface_file,
    wrap_attachment,
)
from memdir.target import CLAUDE_CODE_2_1_328, SEED, Target

DAY = 86_400.0
NOW = 1_800_000_000.0


def test_age_and_header_wording() -> None:
    assert age_text(NOW - 5, NOW) == "today"
    assert age_text(NOW - DAY - 1, NOW) == "yesterday"
    assert age_text(NOW - 47 * DAY, NOW) == "47 days ago"
    assert age_text(NOW + 3 * DAY, NOW) == "today"  # clock skew
    assert memory_header("/m/a.md", NOW - 3 * DAY, NOW, SEED) == (
        "Memory (saved 3 days ago): /m/a.md:"
    )
    assert memory_header("/m/a.md", NOW - 3 * DAY, NOW, CLAUDE_CODE_2_1_328) == "Memory: /m/a.md:"


def test_staleness_only_after_a_day() -> None:
    assert staleness_text(NOW - DAY - 10, NOW) == ""
    text = staleness_text(NOW - 2 * DAY, NOW)
    assert text.startswith("This memory is 2 days old.")
    assert "Verify against current code" in text


def test_cut_by_lines() -> None:
    text = "\n".join(f"l{i}" for i in range(250)) + "\n"
    kept, reason = cut_for_injection(text)
    assert kept.split("\n") == [f"l{i}" for i in range(200)]
    assert reason == "over 200 lines"


def test_cut_by_bytes_at_line_end() -> None:
    line = "中" * 100  # 300 bytes
    kept, reason = cut_for_injection("\n".join([line] * 20))
    assert reason == "over 4096 bytes"
    assert len(kept.encode()) <= C.SURFACE_MAX_BYTES
    assert kept == "\n".join([line] * 13)  # 13*300 + 12 = 3,912; a 14th line would pass 4096


def test_a_line_crossing_the_byte_cap_is_left_out_whole() -> None:
    assert cut_for_injection("😀" * 2000) == ("", "over 4096 bytes")
    assert cut_for_injection("head\n" + "x" * 5000 + "\ntail") == ("head", "over 4096 bytes")


def test_small_file_not_cut_and_keeps_its_final_newline() -> None:
    assert cut_for_injection("a\nb\n") == ("a\nb\n", None)


def test_the_empty_line_after_a_final_newline_counts_toward_200() -> None:
    assert cut_for_injection("x\n" * 199) == ("x\n" * 199, None)
    kept, reason = cut_for_injection("x\n" * 200)
    assert (kept, reason) == ("\n".join(["x"] * 200), "over 200 lines")


@given(st.text(max_size=9000))
def test_injection_cap_never_exceeded_nor_character_broken(text: str) -> None:
    kept, reason = cut_for_injection(text)
    assert len(kept.encode("utf-8", errors="surrogatepass")) <= C.SURFACE_MAX_BYTES
    assert len(kept.split("\n")) <= C.SURFACE_MAX_LINES
    assert text.startswith(kept)
    if reason is None:
        assert kept == text


def _write(path: Path, text: str, age_days: float) -> Path:
    import os

    path.write_text(text, encoding="utf-8")
    os.utime(path, (NOW - age_days * DAY, NOW - age_days * DAY))
    return path


def test_surface_file_block_seed(tmp_path: Path) -> None:
    path = _write(tmp_path / "big.md", "---\nname: big\n---\n" + "x\n" * 300, 3)
    memory = surface_file(path, tmp_path, now=NOW, target=SEED)
    assert memory.truncated
    assert memory.rel_path == "big.md"
    lines = memory.text.split("\n")
    assert lines[0] == f"Memory (saved 3 days ago): {path}:"
    assert lines[1].startswith("This memory is 3 days old.")
    assert lines[2] == ""
    assert lines[3] == "---"
    assert memory.text.endswith(
        f"x\n\n> This memory file was truncated (over 200 lines). "
        f"Use the Read tool to view the complete file at: {path}"
    )
    assert memory.bytes == memory.cost == len(memory.content.encode())
    assert memory.content.count("\n") == 199


def test_surface_file_block_claude_code(tmp_path: Path) -> None:
    path = _write(tmp_path / "big.md", "---\nname: big\n---\n" + "é\n" * 300, 3)
    memory = surface_file(path, tmp_path, now=NOW, target=CLAUDE_CODE_2_1_328)
    stale = staleness_text(NOW - 3 * DAY, NOW)
    note = (
        "> This memory file was truncated (first 200 lines). "
        f"Use the Read tool to view the complete file at: {path}"
    )
    assert memory.text == f"{stale}\n\nMemory: {path}:\n\n{memory.content}\n\n{note}"
    assert memory.content == "---\nname: big\n---\n" + "\n".join(["é"] * 197)
    # The budget counts UTF-16 units of the content with its note (é is 2 bytes, 1 unit).
    assert memory.cost == len(memory.content) + 2 + len(note)
    assert memory.bytes == len(memory.content.encode())


def test_fresh_memory_has_no_note_and_byte_cap_wording(tmp_path: Path) -> None:
    path = _write(tmp_path / "b.md", "one\n" + "x" * 5000 + "\n", 1.5)
    memory = surface_file(path, tmp_path, now=NOW, target=CLAUDE_CODE_2_1_328)
    assert memory.text == (
        f"Memory: {path}:\n\none\n\n> This memory file was truncated (4096 byte limit). "
        f"Use the Read tool to view the complete file at: {path}"
    )


def test_content_cleaned_as_the_agent_does(tmp_path: Path) -> None:
    text = "a\u200bb\r\nc\u2028d <system-reminder>x</system-reminder>\n"
    path = _write(tmp_path / "c.md", text, 0)
    for target in (SEED, CLAUDE_CODE_2_1_328):
        memory = surface_file(path, tmp_path, now=NOW, target=target)
        assert memory.content == "ab\nc\nd <system-reminder>x</system-reminder>\n"
        assert memory.text.endswith("ab\nc\nd <\\system-reminder>x<\\/system-reminder>\n")


def test_surface_unreadable_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        surface_file(tmp_path / "missing.md", tmp_path)
    (tmp_path / "b.md").write_bytes(b"\x00bin")
    with pytest.raises(OSError):
        surface_file(tmp_path / "b.md", tmp_path)


def test_wrap_attachment() -> None:
    assert wrap_attachment(["a", "b"]) == (
        "<system-reminder>\na\n</system-reminder>\n\n<system-reminder>\nb\n</system-reminder>"
    )


def test_render_attachment_by_target(tmp_path: Path) -> None:
    one = surface_file(_write(tmp_path / "a.md", "A\n", 0), tmp_path, now=NOW)
    two = surface_file(_write(tmp_path / "b.md", "B", 0), tmp_path, now=NOW)
    intro = C.RELEVANT_MEMORIES_INTRO
    assert render_attachment([one, two], CLAUDE_CODE_2_1_328) == (
        f"{intro}\n\n{one.text}\n{two.text}"
    )
    assert render_attachment([one, two], SEED) == wrap_attachment([one.text, two.text])
    assert render_attachment([], CLAUDE_CODE_2_1_328) == ""


def _memories(tmp_path: Path, count: int, size: int, target: Target = SEED) -> list[SurfacedMemory]:
    out = []
    for i in range(count):
        path = tmp_path / f"m{i}.md"
        path.write_text("y" * size)
        out.append(surface_file(path, tmp_path, target=target))
    return out


def test_session_turn_cap_dedupe_and_read(tmp_path: Path) -> None:
    session = Session()
    memories = _memories(tmp_path, 8, 100)
    session.mark_read([tmp_path / "m0.md"])
    first = session.take_turn(memories)
    assert [m.rel_path for m in first] == ["m1.md", "m2.md", "m3.md", "m4.md", "m5.md"]
    second = session.take_turn(memories)
    assert [m.rel_path for m in second] == ["m6.md", "m7.md"]
    assert session.take_turn(memories) == []
    assert session.budget_used == 700


def test_session_admits_a_name_repeated_in_one_turn_twice(tmp_path: Path) -> None:
    session = Session()
    [memory] = _memories(tmp_path, 1, 10, CLAUDE_CODE_2_1_328)
    assert session.take_turn([memory, memory], CLAUDE_CODE_2_1_328) == [memory, memory]
    assert session.take_turn([memory], CLAUDE_CODE_2_1_328) == []


def test_claude_code_checks_the_budget_only_when_a_turn_starts(tmp_path: Path) -> None:
    session = Session(budget_used=C.SESSION_BUDGET_BYTES - 1)
    memories = _memories(tmp_path, 6, 4000, CLAUDE_CODE_2_1_328)
    assert len(session.take_turn(memories, CLAUDE_CODE_2_1_328)) == 5
    assert session.budget_used == C.SESSION_BUDGET_BYTES - 1 + 5 * 4000


def test_session_budget_spent_and_reset_on_compaction(tmp_path: Path) -> None:
    session = Session()
    memories = _memories(tmp_path, 20, 4000)  # 4,000 bytes each; 60 KB = 61,440
    surfaced = []
    for _ in range(4):
        surfaced += session.take_turn(memories, SEED)
    assert len(surfaced) == 16  # 15 fit under the budget; the 16th crosses it, then it is spent
    assert session.spent and session.budget_left == 0
    assert session.take_turn(memories, SEED) == []
    session.compact()
    assert not session.spent and session.budget_used == 0
    again = session.take_turn(memories, SEED)
    assert [m.rel_path for m in again] == ["m0.md", "m1.md", "m2.md", "m3.md", "m4.md"]
    assert session.compactions == 1


def test_session_round_trip_and_corrupt_file(tmp_path: Path) -> None:
    session = Session()
    session.mark_read(["/m/a.md"])
    session.take_turn(_memories(tmp_path, 1, 10))
    path = tmp_path / "session.json"
    session.save(path)
    loaded = Session.load(path)
    assert loaded.to_json() == session.to_json()
    assert Session.load(tmp_path / "new.json").to_json() == Session().to_json()
    path.write_text("{broken")
    with pytest.raises(ValueError, match="not a session file"):
        Session.load(path)
    path.write_text(json.dumps({"surfaced": [1, 2]}))
    with pytest.raises(ValueError, match="malformed session"):
        Session.load(path)
