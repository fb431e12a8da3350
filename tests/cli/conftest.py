"""Shared by the CLI tests: the developer's own selector credentials never reach a test."""

from __future__ import annotations

import pytest
from memhelpers import selector_env_vars


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their credentials; those of the machine running them are cleared."""
    for name in selector_env_vars():
        monkeypatch.delenv(name, raising=False)
