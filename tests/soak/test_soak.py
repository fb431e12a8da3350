"""The soak: a seeded random session of edits, renames and outside-the-editor changes against
the real ``memdir-lsp``, after which (and at checkpoints on the way) the findings the client
holds equal a fresh lint of the same directory with the same editor texts.

``MEMDIR_SOAK_STEPS`` sets the session length (default 300: seconds; 5000 for a long run) and
``MEMDIR_SOAK_SEED`` the seed. On a mismatch the session is cut down to the operations it needs
and printed, ready to paste into a regression test.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from memhelpers import generate_memdir
from soak_driver import PRESETS, as_test, minimise, run_ops

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    # A server message beyond what the client declared is a bug in capability gating.
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

STEPS = int(os.environ.get("MEMDIR_SOAK_STEPS", "300"))
SEED = int(os.environ.get("MEMDIR_SOAK_SEED", "18"))
#: Topic files in the generated directory (with its planted problems).
FILES = 24


# The agent's layout (``<config>/projects/<slug>/memory``) makes the folder a memory dir with or
# without MEMORY.md, so a session may delete the index: a plain folder stops being one (by
# design, memdir_lsp.discovery) and would rightly have no findings at all.


def _setup(root: Path) -> None:
    generate_memdir(root, FILES, seed=SEED)


@pytest.mark.parametrize("preset", PRESETS)
async def test_soak_findings_equal_lint(preset: str, tmp_path: Path) -> None:
    outcome = await run_ops(
        preset,
        tmp_path / "projects" / "soak" / "memory",
        seed=SEED,
        steps=STEPS,
        every=10,
        setup=_setup,
    )
    if outcome.failed_at is None:
        assert outcome.compared > STEPS // 10, "the session compared (almost) no findings"
        return
    counter = itertools.count()

    def fresh() -> Path:
        return tmp_path / f"min-{next(counter)}" / "projects" / "soak" / "memory"

    smallest = await minimise(preset, fresh, _setup, outcome.ops[: outcome.failed_at + 1])
    pytest.fail(
        f"seed {SEED}: the server's findings differ from lint after operation "
        f"{outcome.failed_at + 1} of {len(outcome.ops)}:\n{outcome.diff}\n\n"
        f"minimised ({len(smallest.ops)} operations):\n"
        f"{as_test(preset, SEED, FILES, smallest)}"
    )
