"""The fault tests' dirs live in memory (``/dev/shm``) where there is one: a kill -9 tests what
a process leaves, not what the disk keeps, and fsync on a shared test machine's disk would be
most of the run's time."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_SHM = Path("/dev/shm")


@pytest.fixture
def tmp_path(tmp_path: Path) -> Iterator[Path]:
    if not (_SHM.is_dir() and os.access(_SHM, os.W_OK)):
        yield tmp_path
        return
    place = Path(tempfile.mkdtemp(prefix="memdir-faults-", dir=_SHM))
    try:
        yield place
    finally:
        shutil.rmtree(place, ignore_errors=True)
