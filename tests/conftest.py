"""Shared fixtures: small memory directories built on disk."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def make_dir(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Build a memory dir from {relative path: text or bytes}; mtimes follow the dict order."""

    def build(files: dict[str, str | bytes], base_mtime: float = 1_700_000_000.0) -> Path:
        root = tmp_path / "memory"
        root.mkdir(exist_ok=True)
        for offset, (rel, content) in enumerate(files.items()):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
            os.utime(path, (base_mtime + offset, base_mtime + offset))
        return root

    return build
