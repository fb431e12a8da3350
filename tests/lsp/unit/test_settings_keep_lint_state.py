"""A settings change that leaves a memory dir's lint settings equal (the debounce, say) keeps
its lint state: nothing is read again, and the next edit stays incremental."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from lsprotocol import types
from memdir.config import Settings
from memdir.lint.state import DirState
from memdir_lsp.diagnostics import on_settings_changed, state_of
from memdir_lsp.server import MemoryServer


def test_a_debounce_change_keeps_the_state_and_reads_nothing(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [Role](role.md) — who\n", encoding="utf-8")
    (root / "role.md").write_text(
        "---\nname: role\ndescription: what the user does and wants\ntype: user\n---\nData.\n",
        encoding="utf-8",
    )
    server = MemoryServer()
    # pygls's own initialize (no handlers registered on a bare server): a workspace, capabilities.
    for _ in server.protocol.lsp_initialize(
        types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=None)
    ):
        pass
    server.set_directories({root: {"workspace"}})
    state_of(server).pull = True  # results only: nothing to publish to
    asyncio.run(on_settings_changed(server))
    [directory] = server.directories.values()
    before = directory.lint_state
    assert isinstance(before, DirState)
    reads = dict(before.reads)

    server.editor_settings = dataclasses.replace(server.editor_settings, debounce_ms=0)
    server.reload_settings()  # as settings_changed does: equal Settings, a new object
    asyncio.run(on_settings_changed(server))
    assert directory.lint_state is before and dict(before.reads) == reads

    # A lint setting that differs does start over.
    directory.settings = Settings(index_line_limit=100)
    asyncio.run(on_settings_changed(server))
    assert directory.lint_state is not before
