"""Benchmark ``memdir lint`` against a plain read loop and against Markdown linters.

For each size (200, 2,000 and 20,000 topic files by default) the script generates a directory
with :mod:`gen_memdir` (seeded; under ``benchmarks/data/``, which git ignores) and times:

* floor: a plain Python loop that walks the directory and reads the first 4 KB of every ``.md``
  file, in process and as a fresh interpreter (``python -c``), the fair match for a CLI;
* ``memdir lint`` cold: the CLI end to end in a subprocess, and in process (a new
  :class:`~memdir.lint.DirState`, modules already imported);
* ``memdir lint`` warm: an existing DirState after one topic file is edited (its body grows by
  a line), via ``update(path)`` (what the language server does on a change) and via
  ``refresh()`` (stat every file), each followed by ``lint()``;
* peers checking line length 150 on the same directory, when installed: ``rumdl``,
  ``markdownlint-cli2`` (found on PATH, in ``$MARKDOWNLINT_CLI2`` or under
  ``/tmp/memdir-bench-peers``) and ``pymarkdown`` (pymarkdownlnt). Missing peers are skipped.

"Cold" means a new process with nothing cached by memdir; the operating system's page cache is
warm (every run reads the same files), as it is for the floor and the peers. Each figure is the
median of ``--repeat`` runs (wall clock). The benchmark directories hold no binary or non-UTF-8
file, because pymarkdown stops at the first one; lint's handling of those is covered by tests.
The file the warm runs edit gets its bytes and its mtime back, so every run lints the same dir.

``--baseline TREE`` also times the ``memdir lint`` of another checkout of memdir (its
``memory`` and ``server`` directories on ``PYTHONPATH``, same interpreter) on the same data, in
turn with this tree's run, so before/after ratios come from one run on a machine whose speed
drifts. The figures and what they mean are in docs/performance.md, "Lint speed".

Usage::

    .venv/bin/python benchmarks/lint_bench.py                 # 200, 2000, 20000
    .venv/bin/python benchmarks/lint_bench.py --sizes 2000 --repeat 7
    .venv/bin/python benchmarks/lint_bench.py --no-peers --baseline ../baseline
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_memdir  # noqa: E402
from timing import median_time  # noqa: E402

FLOOR_SOURCE = """
import os, sys
n = 0
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        if f.endswith('.md'):
            with open(os.path.join(d, f), 'rb') as h:
                h.read(4096)
            n += 1
"""


def floor_loop(root: Path) -> int:
    count = 0
    for directory, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".md"):
                with open(os.path.join(directory, name), "rb") as handle:
                    handle.read(4096)
                count += 1
    return count


#: Commands run as an installed tool runs: with bytecode caching on. Under
#: PYTHONDONTWRITEBYTECODE (set in some sandboxes and CI images) an editable install never
#: gets ``.pyc`` files and every run recompiles memdir from source (~45 ms), which no user
#: of an installed package pays.
COMMAND_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_command(
    argv: Sequence[str],
    cwd: Path | None = None,
    timeout: float = 600,
    env: dict[str, str] | None = None,
) -> None:
    subprocess.run(
        list(argv),
        capture_output=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
        env=env if env is not None else COMMAND_ENV,
    )


def tree_env(tree: Path) -> dict[str, str]:
    """The environment that runs ``python -m memdir`` from the checkout ``tree``."""
    path = os.pathsep.join(str(tree / part) for part in ("memory", "server"))
    return {**COMMAND_ENV, "PYTHONPATH": path}


def alternating_medians(runs: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """The median time of each run, taken in turn (a, b, a, b, ...): drift hits both alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


@dataclass
class Row:
    files: int
    times: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def memdir_command() -> list[str]:
    script = Path(sys.executable).with_name("memdir")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memdir"]


def find_markdownlint() -> str | None:
    for candidate in (
        os.environ.get("MARKDOWNLINT_CLI2"),
        shutil.which("markdownlint-cli2"),
        "/tmp/memdir-bench-peers/node_modules/.bin/markdownlint-cli2",
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def peer_commands(root: Path, scratch: Path) -> dict[str, list[str]]:
    peers: dict[str, list[str]] = {}
    bindir = Path(sys.executable).parent
    rumdl = shutil.which("rumdl") or (
        str(bindir / "rumdl") if (bindir / "rumdl").exists() else None
    )
    if rumdl:
        peers["rumdl"] = [
            rumdl,
            "check",
            str(root),
            "--no-config",
            "--no-cache",
            "--enable",
            "MD013",
            "--config",
            "MD013.line-length = 150",
            "--quiet",
            "--color",
            "never",
        ]
    markdownlint = find_markdownlint()
    if markdownlint:
        config = scratch / "markdownlint.jsonc"
        config.write_text(
            json.dumps({"config": {"default": False, "MD013": {"line_length": 150}}}),
            encoding="utf-8",
        )
        peers["markdownlint-cli2"] = [markdownlint, "--config", str(config), f"{root}/**/*.md"]
    pymarkdown = shutil.which("pymarkdown") or (
        str(bindir / "pymarkdown") if (bindir / "pymarkdown").exists() else None
    )
    if pymarkdown:
        peers["pymarkdown"] = [
            pymarkdown,
            "--set",
            "plugins.selectively_enable_rules=$!True",
            "--enable-rules",
            "md013",
            "--set",
            "plugins.md013.line_length=$#150",
            "scan",
            "--recurse",
            str(root),
        ]
    return peers


def bench_size(
    files: int, repeat: int, peer_timeout: float, skip_peers: bool, baseline: Path | None = None
) -> Row:
    from memdir.lint import DirState

    root = HERE / "data" / f"bench-{files}"
    if not (root / "MEMORY.md").exists() or not (root / "PLANTED.json").exists():
        gen_memdir.generate(root, files, seed=1, invalid_files=False)
    row = Row(files)
    reps = repeat if files < 20_000 else max(3, repeat // 2)

    row.times["floor"] = median_time(lambda: floor_loop(root), reps)
    row.times["floor_proc"] = median_time(
        lambda: run_command([sys.executable, "-c", FLOOR_SOURCE, str(root)]), reps
    )
    lint_argv = [*memdir_command(), "lint", str(root)]
    run_command(lint_argv)  # untimed: writes the bytecode cache, as installing would
    if baseline is None:
        row.times["cli_cold"] = median_time(lambda: run_command(lint_argv), reps)
    else:
        # Both trees the same way (``python -m memdir`` with the tree on PYTHONPATH), in turn.
        module_argv = [sys.executable, "-m", "memdir", "lint", str(root)]
        here, there = tree_env(HERE.parent), tree_env(baseline)
        for env in (here, there):
            run_command(module_argv, env=env)  # untimed: each tree's bytecode cache
        row.times.update(
            alternating_medians(
                {
                    "cli_cold": lambda: run_command(module_argv, env=here),
                    "base_cli_cold": lambda: run_command(module_argv, env=there),
                },
                reps,
            )
        )

    def cold_in_process() -> None:
        state = DirState(root)
        state.refresh()
        state.lint()

    row.times["lib_cold"] = median_time(cold_in_process, reps)

    state = DirState(root)
    state.refresh()
    state.lint()
    # The language server's common case: one memory edited. (Not MEMORY.md, which sorts first.)
    target = next(p for p in sorted(root.glob("*.md")) if p.name != "MEMORY.md")
    original = target.read_bytes()
    original_stat = target.stat()
    counter = [0]

    def touch() -> None:
        counter[0] += 1
        target.write_bytes(original + f"\nEdit {counter[0]}.\n".encode())

    def warm_update() -> None:
        state.update(target)
        state.lint()

    def warm_refresh() -> None:
        state.refresh()
        state.lint()

    # Garbage left by the cold runs above is not the warm run's cost: collect it first.
    gc.collect()
    row.times["warm_update"] = median_time(warm_update, reps, prepare=touch)
    row.times["warm_refresh"] = median_time(warm_refresh, reps, prepare=touch)
    target.write_bytes(original)
    # Its old mtime too: the next run (and the next size's cold runs) lint the generated dir.
    os.utime(target, ns=(original_stat.st_atime_ns, original_stat.st_mtime_ns))

    if not skip_peers:
        with tempfile.TemporaryDirectory() as scratch:
            for name, argv in peer_commands(root, Path(scratch)).items():
                try:
                    row.times[name] = median_time(
                        lambda argv=argv: run_command(argv, timeout=peer_timeout),
                        reps if name != "pymarkdown" else 1,
                    )
                except subprocess.TimeoutExpired:
                    row.notes.append(f"{name}: over {peer_timeout:.0f} s, stopped")
    return row


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.1f} ms"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if a is not None and b else "—"


def print_table(rows: list[Row]) -> None:
    if any("base_cli_cold" in row.times for row in rows):
        print()
        print("| files | lint CLI cold, baseline | lint CLI cold, this tree | this / baseline |")
        print("|---:|---:|---:|---:|")
        for row in rows:
            base, now = row.times.get("base_cli_cold"), row.times["cli_cold"]
            print(f"| {row.files:,} | {fmt(base)} | {fmt(now)} | {ratio(now, base)} |")
    print()
    print(
        "| files | floor (in-proc / process) | lint CLI cold | × floor process | "
        "lint in-proc cold | × floor in-proc | warm update | warm refresh |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        t = row.times
        print(
            f"| {row.files:,} | {fmt(t['floor'])} / {fmt(t['floor_proc'])} | "
            f"{fmt(t['cli_cold'])} | {ratio(t['cli_cold'], t['floor_proc'])} | "
            f"{fmt(t['lib_cold'])} | {ratio(t['lib_cold'], t['floor'])} | "
            f"{fmt(t['warm_update'])} | {fmt(t['warm_refresh'])} |"
        )
    peers = sorted(
        {k for row in rows for k in row.times}
        - {"floor", "floor_proc", "cli_cold", "lib_cold", "warm_update", "warm_refresh"}
        - {"base_cli_cold"}
    )
    if peers:
        print()
        print("| files | lint CLI cold | " + " | ".join(f"{p} (× lint)" for p in peers) + " |")
        print("|---:|---:|" + "---:|" * len(peers))
        for row in rows:
            cells = [
                f"{fmt(row.times.get(p))} ({ratio(row.times.get(p), row.times['cli_cold'])})"
                for p in peers
            ]
            print(f"| {row.files:,} | {fmt(row.times['cli_cold'])} | " + " | ".join(cells) + " |")
    for row in rows:
        for note in row.notes:
            print(f"note ({row.files:,} files): {note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="200,2000,20000", help="comma-separated file counts")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--peer-timeout", type=float, default=300.0, help="seconds per peer run")
    parser.add_argument("--no-peers", action="store_true", help="skip the other linters")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="TREE",
        help="also time the memdir lint of this checkout (e.g. a git worktree), in turn",
    )
    args = parser.parse_args(argv)
    baseline = args.baseline.resolve() if args.baseline is not None else None
    if baseline is not None and not (baseline / "memory" / "memdir").is_dir():
        parser.error(f"not a memdir checkout: {args.baseline}")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"benchmarking {size:,} files ...", file=sys.stderr, flush=True)
        rows.append(bench_size(size, args.repeat, args.peer_timeout, args.no_peers, baseline))
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
