"""The quick loop runs on pytest-xdist workers (CONTRIBUTING.md): each worker must get its own
memdir state dir from tests/conftest.py, so tests in two workers never meet at a write lock or a
journal, and each worker's is removed when it ends."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")
pytestmark = pytest.mark.processes

#: Only against a hang.
GUARD = 120

PROBE = """
import json, os
from pathlib import Path

def test_report_the_state_dir():
    state = os.environ["XDG_STATE_HOME"]
    assert Path(state).is_dir()
    report = Path(os.environ["PROBE_OUT"]) / (os.environ["PYTEST_XDIST_WORKER"] + ".json")
    report.write_text(json.dumps({"state": state, "pid": os.getpid()}))
"""


def test_each_worker_has_its_own_state_dir(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(Path(__file__).with_name("conftest.py"), suite / "conftest.py")
    (suite / "test_probe.py").write_text(PROBE, "utf-8")
    out = tmp_path / "out"
    out.mkdir()
    # `--dist each`: every worker runs the probe, so there is one report per worker.
    argv = ["-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "each", str(suite)]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *argv],
        cwd=suite,
        env={**os.environ, "PROBE_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=GUARD,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reports = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    assert len(reports) == 2 and len({r["pid"] for r in reports}) == 2, reports
    states = {r["state"] for r in reports}
    assert len(states) == 2, reports  # each worker its own
    assert os.environ["XDG_STATE_HOME"] not in states  # nor this run's
    assert not any(Path(state).exists() for state in states)  # and removed at its end
