"""Benchmark the citation rules (MEM117, MEM118) against a large git project.

Issue 17's goal: 200 memories against a 50,000-file project in at most 1 s cold, and at most
50 ms to re-check after one project file changes. The script generates, into a temporary
directory and from a fixed seed:

* a git repository of ``--files`` files (50,000 by default): Python, TypeScript and Go modules
  that define and call identifiers, plus docs and config, committed in a few hundred commits
  whose history renames files, moves a few directories, deletes files and removes functions;
* a memory dir of ``--memories`` memories (200) citing paths and identifiers: most exist, some
  were renamed, moved or deleted, some identifiers were removed or never existed.

It then times, in one run:

* cold, in process: :meth:`Project.load <memdir.project.lookup.Project.load>`, the one-pass lookup
  of the cited words and a lint of the memory dir (modules already imported);
* cold, the CLI: ``memdir lint MEMDIR --project ROOT`` in a fresh process;
* re-check after one project file changes (``--changes`` of them, p50 and p95): the file is
  rewritten (a cited identifier added or removed, or an unrelated line), then
  ``Project.update_file`` and, when it says a finding can change, ``DirState.recheck_citations``
  (of the memories whose check asked about what changed) and ``lint()``; a new file and a
  deleted file are among the changes;
* the baseline: a plain ``git grep -q -w -F`` per cited identifier and a ``git ls-files`` (or
  ``test -e``) per cited path, what a script checking each citation would run.

Each cold figure is the median of ``--repeat`` runs (wall clock; the page cache is warm, as it
is for the baseline). The findings of the in-process lint are checked against what was planted
(a missing citation not reported, or an existing one reported, fails the run). The figures and
what they mean are in docs/performance.md, "Freshness".

Usage::

    .venv/bin/python benchmarks/freshness_bench.py
    .venv/bin/python benchmarks/freshness_bench.py --files 5000 --memories 50 --keep /tmp/fresh
"""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "memory"))
sys.path.insert(0, str(HERE))

from timing import median_time, percentile  # noqa: E402

GOAL_COLD = 1.0
GOAL_CHANGE = 0.050

AREAS = ("services", "lib", "web", "tools", "platform", "internal", "apps", "pkg")
TEAMS = (
    "billing", "checkout", "ledger", "payments", "search", "ranking", "ingest", "notify",
    "accounts", "auth", "catalog", "orders", "shipping", "pricing", "reports", "audit",
    "inventory", "fraud", "gateway", "scheduler", "export", "sync", "media", "profile",
)  # fmt: skip
PARTS = (
    "api", "core", "models", "handlers", "storage", "workers", "client", "util", "jobs",
    "schema", "events", "cache", "metrics", "config", "queue", "adapters", "views", "tasks",
)  # fmt: skip
VERBS = (
    "get", "set", "load", "save", "parse", "render", "retry", "charge", "refund", "sync",
    "fetch", "build", "apply", "resolve", "validate", "merge", "split", "flush", "emit",
    "record", "compute", "reconcile", "publish", "schedule", "cancel", "expire", "index",
)  # fmt: skip
NOUNS = (
    "payment", "invoice", "user", "order", "cart", "price", "token", "session", "batch",
    "ledger", "entry", "report", "event", "queue", "cursor", "account", "refund", "webhook",
    "shipment", "coupon", "quota", "snapshot", "metric", "rule", "schedule", "export",
)  # fmt: skip
WORDS = (
    "value", "count", "result", "items", "limit", "offset", "state", "config", "client",
    "context", "request", "response", "error", "retries", "deadline", "payload", "record",
)  # fmt: skip
LANGS = (("py", 50), ("ts", 25), ("go", 15), ("md", 5), ("json", 3), ("yaml", 2))


def pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


@dataclass
class Module:
    """One generated file: what it defines and calls (its text is made from these)."""

    path: str
    defs: list[str]
    calls: list[str]
    seed: int


def render(module: Module) -> str:
    """The text of a module: a header, one function or method per definition, calling others."""
    rng = random.Random(module.seed)
    ext = module.path.rsplit(".", 1)[-1]
    stem = module.path.rsplit("/", 1)[-1].split(".")[0]
    lines: list[str] = []
    calls = module.calls or ["len"]
    if ext in ("md", "json", "yaml"):
        for name in module.defs + calls:
            word = rng.choice(WORDS)
            if ext == "md":
                lines.append(f"- `{name}` handles the {word} of {stem}; see the runbook.")
            elif ext == "json":
                lines.append(f'  "{name}": {{"{word}": {rng.randint(1, 500)}}},')
            else:
                lines.append(f"{name}:\n  {word}: {rng.randint(1, 500)}")
        return "\n".join(lines) + "\n"
    if ext == "py":
        lines.append(f'"""The {stem} module."""\n\nfrom __future__ import annotations\n')
        lines.append(f"class {pascal(stem)}Error(Exception):\n    pass\n")
    elif ext == "ts":
        lines.append(f"// The {stem} module.\nimport {{ {', '.join(calls[:3])} }} from './deps';\n")
    else:
        lines.append(f"// Package {stem}.\npackage {stem.replace('_', '')}\n")
    for name in module.defs:
        args = rng.sample(WORDS, 2)
        body = []
        for _ in range(rng.randint(2, 7)):
            target, word = rng.choice(calls), rng.choice(WORDS)
            if ext == "py":
                body.append(f"    {word} = {target}({args[0]}, {word})")
            elif ext == "ts":
                body.append(f"  const {word} = {target}({args[0]}, {word});")
            else:
                body.append(f"\t{word} := {target}({args[0]}, {word})")
        if ext == "py":
            lines.append(f"def {name}({args[0]}, {args[1]}=None):")
            lines.append(f'    """{rng.choice(VERBS).capitalize()} the {args[1]}."""')
            lines.extend(body)
            lines.append(f"    return {args[0]}\n")
        elif ext == "ts":
            lines.append(f"export function {name}({args[0]}: unknown, {args[1]}?: unknown) {{")
            lines.extend(body)
            lines.append(f"  return {args[0]};\n}}\n")
        else:
            lines.append(f"func {pascal(name)}({args[0]} any, {args[1]} any) any {{")
            lines.extend(body)
            lines.append(f"\treturn {args[0]}\n}}\n")
    return "\n".join(lines) + "\n"


@dataclass
class Project:
    """What was generated: the files now, and what the history did."""

    root: Path
    modules: dict[str, Module]
    renamed: dict[str, str] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    removed_names: list[str] = field(default_factory=list)
    commits: int = 0


def _fast_import_data(data: str) -> bytes:
    raw = data.encode()
    return b"data %d\n" % len(raw) + raw + b"\n"


def generate_project(root: Path, files: int, commits: int, seed: int) -> Project:
    """A git repository of ``files`` files with ``commits`` commits of history (git
    fast-import: a real history, made in seconds)."""
    rng = random.Random(seed)
    names = [f"{v}_{n}" for v in VERBS for n in NOUNS]
    modules: dict[str, Module] = {}
    paths: list[str] = []
    exts = [ext for ext, weight in LANGS for _ in range(weight)]
    counter = 0
    while len(paths) < files + 600:  # some are deleted or merged by the history
        area, team = rng.choice(AREAS), rng.choice(TEAMS)
        directory = f"{area}/{team}/{rng.choice(PARTS)}{rng.randint(0, 90)}"
        for _ in range(rng.randint(4, 24)):
            counter += 1
            ext = rng.choice(exts)
            stem = f"{rng.choice(PARTS)}_{rng.choice(NOUNS)}_{counter}"
            path = f"{directory}/{stem}.{ext}"
            if path in modules:
                continue
            count = rng.randint(2, 10)
            defs = [f"{rng.choice(names)}_{counter}_{i}" for i in range(count)]
            modules[path] = Module(path, defs, [], rng.randrange(1 << 30))
            paths.append(path)
    every_def = [d for m in modules.values() for d in m.defs]
    for module in modules.values():
        module.calls = rng.sample(every_def, rng.randint(2, 6)) + rng.sample(names, 2)
    called = {c for m in modules.values() for c in m.calls}
    project = Project(root, modules)

    # Initial commit: everything; the history then changes what exists.
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    stream = io.BytesIO()
    when = 1_700_000_000
    stream.write(b"commit refs/heads/main\n")
    stream.write(b"committer Bench <bench@example.com> %d +0000\n" % when)
    stream.write(_fast_import_data("initial import"))
    for path in paths:
        stream.write(b"M 100644 inline %s\n" % path.encode())
        stream.write(_fast_import_data(render(modules[path])))
    project.commits = 1
    live = list(paths)
    for number in range(1, commits):
        when += 3600
        ops: list[bytes] = []
        kind = number % 6
        if kind == 0:  # rename one file (same content: git's rename detection finds it)
            old = live.pop(rng.randrange(len(live)))
            new = old.replace(".", "_v2.", 1) if rng.random() < 0.5 else old.replace("/", "/x", 1)
            if new in modules:
                live.append(old)
                continue
            ops.append(b"R %s %s\n" % (old.encode(), new.encode()))
            module = modules.pop(old)
            module.path = new
            modules[new] = module
            live.append(new)
            project.renamed[old] = new
        elif kind == 1 and number % 24 == 1:  # move a whole directory
            directory = live[rng.randrange(len(live))].rsplit("/", 1)[0]
            target = directory.rsplit("/", 1)[0] + "/moved_" + directory.rsplit("/", 1)[1]
            ops.append(b"R %s %s\n" % (directory.encode(), target.encode()))
            for path in [p for p in live if p.startswith(directory + "/")]:
                new = target + path[len(directory) :]
                module = modules.pop(path)
                module.path = new
                modules[new] = module
                live[live.index(path)] = new
                project.renamed[path] = new
        elif kind == 2:  # delete one or two files
            for _ in range(rng.randint(1, 2)):
                old = live.pop(rng.randrange(len(live)))
                ops.append(b"D %s\n" % old.encode())
                del modules[old]
                project.deleted.append(old)
        elif kind == 3:  # remove a function nobody calls
            module = modules[live[rng.randrange(len(live))]]
            gone = [d for d in module.defs if d not in called]
            if module.path.endswith((".json", ".yaml", ".md")) or not gone:
                continue
            module.defs.remove(gone[0])
            project.removed_names.append(gone[0])
            ops.append(b"M 100644 inline %s\n" % module.path.encode())
            ops.append(_fast_import_data(render(module)))
        else:  # edit a few files
            for _ in range(rng.randint(1, 4)):
                module = modules[live[rng.randrange(len(live))]]
                module.seed += 1
                ops.append(b"M 100644 inline %s\n" % module.path.encode())
                ops.append(_fast_import_data(render(module)))
        stream.write(b"commit refs/heads/main\n")
        stream.write(b"committer Bench <bench@example.com> %d +0000\n" % when)
        stream.write(_fast_import_data(f"change {number}"))
        for op in ops:
            stream.write(op)
        project.commits += 1
    # Trim to the requested size with one last commit of deletions.
    extra = len(live) - files
    if extra > 0:
        stream.write(b"commit refs/heads/main\n")
        stream.write(b"committer Bench <bench@example.com> %d +0000\n" % (when + 3600))
        stream.write(_fast_import_data("remove generated extras"))
        for path in rng.sample(live, extra):
            stream.write(b"D %s\n" % path.encode())
            del modules[path]
            project.deleted.append(path)
        project.commits += 1
    subprocess.run(
        ["git", "-C", str(root), "fast-import", "--quiet"], input=stream.getvalue(), check=True
    )
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "-f", "main"], check=True)
    # Renames chained onto a later delete or rename lead elsewhere: keep only live ends.
    project.renamed = {
        old: new for old, new in project.renamed.items() if new in modules and old not in modules
    }
    project.deleted = [p for p in project.deleted if p not in modules]
    defined = {d for m in modules.values() for d in m.defs} | called
    project.removed_names = [n for n in project.removed_names if n not in defined]
    return project


@dataclass
class Planted:
    """What the memories cite, by what should be found."""

    present_paths: list[str] = field(default_factory=list)
    missing_paths: list[str] = field(default_factory=list)
    present_names: list[str] = field(default_factory=list)
    missing_names: list[str] = field(default_factory=list)
    #: Present name -> the file that defines it.
    where: dict[str, str] = field(default_factory=dict)


def generate_memories(directory: Path, project: Project, count: int, seed: int) -> Planted:
    """``count`` memories citing the project's paths and identifiers, and a MEMORY.md."""
    rng = random.Random(seed + 1)
    directory.mkdir(parents=True)
    planted = Planted()
    live = sorted(project.modules)
    renamed = sorted(project.renamed)
    deleted = sorted(project.deleted)
    code = [m for m in live if not m.endswith((".md", ".json", ".yaml"))]
    index = []
    for number in range(count):
        cited: list[str] = []
        for _ in range(rng.randint(2, 4)):
            roll = rng.random()
            if roll < 0.75 or not (renamed and deleted):
                path = rng.choice(live)
                planted.present_paths.append(path)
                if rng.random() < 0.2:
                    path = path.split("/", 2)[-1]  # cited by its tail
            elif roll < 0.88:
                path = rng.choice(renamed)
                planted.missing_paths.append(path)
            else:
                path = rng.choice(deleted)
                planted.missing_paths.append(path)
            cited.append(f"`{path}`")
        for _ in range(rng.randint(2, 4)):
            roll = rng.random()
            if roll < 0.8 or not project.removed_names:
                module = project.modules[rng.choice(code)]
                name = rng.choice(module.defs)
                if module.path.endswith(".go"):
                    name = pascal(name)  # Go exports it capitalised
                planted.present_names.append(name)
                planted.where[name] = module.path
            elif roll < 0.92:
                name = rng.choice(project.removed_names)
                planted.missing_names.append(name)
            else:
                name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_legacy_{number}"
                planted.missing_names.append(name)
            cited.append(f"`{name}()`")
        rng.shuffle(cited)
        name = f"note_{number:03d}"
        subject = f"{rng.choice(VERBS)} {rng.choice(NOUNS)} in {rng.choice(TEAMS)} ({number})"
        body = (
            f"How we {subject}: start at {cited[0]} and {cited[1]}.\n\n"
            f"**Why:** the {rng.choice(WORDS)} path was rewritten last quarter.\n\n"
            f"**How to apply:** check {', '.join(cited[2:])} before changing it.\n"
        )
        (directory / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: how we {subject}\ntype: project\n---\n\n{body}"
        )
        index.append(f"- [{name}]({name}.md) — how we {subject}")
    (directory / "MEMORY.md").write_text("\n".join(index) + "\n")
    return planted


# --- timing --------------------------------------------------------------------------------------


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms" if seconds < 1 else f"{seconds:,.2f} s"


def findings(result: object) -> dict[str, set[str]]:
    """The cited texts MEM117 and MEM118 report, by code."""
    found: dict[str, set[str]] = {"MEM117": set(), "MEM118": set()}
    for diagnostic in getattr(result, "diagnostics", ()):
        if diagnostic.code in found:
            found[diagnostic.code].add(diagnostic.message.split("`")[1])
    return found


def check_planted(found: dict[str, set[str]], planted: Planted) -> list[str]:
    """What the lint got wrong against what was planted (empty: nothing)."""
    names = {text.removesuffix("()") for text in found["MEM118"]}
    errors = []
    if set(planted.missing_paths) - found["MEM117"]:
        errors.append(
            f"paths not reported: {sorted(set(planted.missing_paths) - found['MEM117'])[:5]}"
        )
    wrong = {p for p in planted.present_paths if p in found["MEM117"]}
    if wrong:
        errors.append(f"existing paths reported: {sorted(wrong)[:5]}")
    if set(planted.missing_names) != names:
        errors.append(
            f"names: not reported {sorted(set(planted.missing_names) - names)[:5]}, "
            f"reported though present {sorted(names - set(planted.missing_names))[:5]}"
        )
    return errors


class Change:
    """One change to a project file for the re-check timings, and its undo."""

    def __init__(self, root: Path, rel: str, text: str | None) -> None:
        self.root, self.rel, self.text = root, rel, text

    def apply(self) -> str | None:
        """Write (or delete, ``text=None``) the file; returns what was there before."""
        path = self.root / self.rel
        before = path.read_text() if path.exists() else None
        if self.text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.text)
        return before


def plan_changes(project: Project, planted: Planted, count: int, seed: int) -> list[Change]:
    """``count`` edits of the kinds an editor session makes: an unrelated line added (most), a
    cited function renamed away, a missing name written in, a new file, a deleted file."""
    rng = random.Random(seed + 2)
    live = sorted(project.modules)
    changes = []
    for number in range(count):
        kind = number % 10
        if kind < 5:  # an edit that touches no cited word
            rel = rng.choice(live)
            text = (project.root / rel).read_text() + f"# note {number}: {rng.choice(WORDS)}\n"
        elif kind < 7:  # a cited name renamed away in one of its files
            name = rng.choice(planted.present_names)
            rel = planted.where[name]
            text = (project.root / rel).read_text().replace(name, name + "_renamed")
        elif kind == 7:  # a missing name written in (the memory becomes true again)
            rel = rng.choice(live)
            text = (project.root / rel).read_text() + f"# see {rng.choice(planted.missing_names)}\n"
        elif kind == 8:  # a new file
            rel = f"{rng.choice(AREAS)}/new_{number}/module_{number}.py"
            text = f"def created_{number}():\n    return None\n"
        else:  # a deleted file
            rel = rng.choice(live)
            text = None
        changes.append(Change(project.root, rel, text))
    return changes


def baseline(
    root: Path, memories: Path, cited_words: Callable[[Path], set[str]], sample: int
) -> tuple[float, int]:
    """What a script checking each citation runs: ``git grep -q -w -F`` per identifier, and
    ``git ls-files --error-unmatch`` (then ``test -e``) per path. With ``sample``, that many of
    each are timed and the total extrapolated. (seconds, commands run)."""
    from memdir.project.citations import extract_citations

    paths: set[str] = set()
    for file in memories.glob("*.md"):
        for citation in extract_citations(file.read_text()):
            if citation.kind == "path":
                paths.add(citation.target)
    words = sorted(cited_words(memories))
    env = {**os.environ, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
    rng = random.Random(0)
    chosen_words = rng.sample(words, min(sample, len(words))) if sample else words
    chosen_paths = rng.sample(sorted(paths), min(sample, len(paths))) if sample else sorted(paths)
    start = time.perf_counter()
    for word in chosen_words:
        subprocess.run(["git", "-C", str(root), "grep", "-q", "-w", "-F", "-e", word],
                       env=env, capture_output=True, check=False)  # fmt: skip
    grep_time = time.perf_counter() - start
    start = time.perf_counter()
    for path in chosen_paths:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--error-unmatch", "--", path],
            env=env, capture_output=True, check=False,
        )  # fmt: skip
        if listed.returncode != 0:
            subprocess.run(["test", "-e", str(root / path)], check=False)
    path_time = time.perf_counter() - start
    total = grep_time * len(words) / max(1, len(chosen_words))
    total += path_time * len(paths) / max(1, len(chosen_paths))
    return total, len(chosen_words) + len(chosen_paths)


def run(
    args: argparse.Namespace, root: Path, memories: Path, project: Project, planted: Planted
) -> int:
    from memdir.config import load_settings
    from memdir.lint.state import DirState
    from memdir.project.citations import cited_words
    from memdir.project.lookup import Project as Loaded

    settings = load_settings(memories, None)

    def cold() -> tuple[Loaded, DirState, object]:
        loaded = Loaded.load(root, memories, cited_words(memories))
        state = DirState(memories, settings, loaded)
        state.refresh()
        return loaded, state, state.lint()

    loaded, state, result = cold()
    errors = check_planted(findings(result), planted)
    in_process = median_time(cold, args.repeat)
    command = [sys.executable, "-m", "memdir", "lint", str(memories), "--project", str(root)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "memory")}
    cli = median_time(
        lambda: subprocess.run(command, env=env, capture_output=True, check=False), args.repeat
    )
    # The parts of a cold run, once each.
    start = time.perf_counter()
    parts = Loaded.load(root, memories)
    listed = time.perf_counter() - start
    start = time.perf_counter()
    parts.find_words(cited_words(memories))
    looked_up = time.perf_counter() - start

    # Re-checks: the state above, one project file changed at a time.
    updates: list[float] = []
    rechecks: list[float] = []
    relint_times: list[float] = []
    rechecked: list[int] = []
    undo: list[Change] = []
    for change in plan_changes(project, planted, args.changes, args.seed):
        before = change.apply()
        undo.append(Change(root, change.rel, before))
        start = time.perf_counter()
        if change.text is None:
            changed = loaded.remove_file(change.rel)
        else:
            changed = loaded.update_file(change.rel)
        updated = time.perf_counter()
        if changed:
            rechecked.append(len(state.recheck_citations(changed)))
            result = state.lint()
            relint_times.append(time.perf_counter() - updated)
        end = time.perf_counter()
        updates.append(updated - start)
        rechecks.append(end - start)
    # After every change, the incremental answers equal a fresh project's.
    _, _, fresh = cold()
    if findings(state.lint()) != findings(fresh):
        errors.append("the re-checked findings differ from a fresh lint's")
    for change in reversed(undo):
        change.apply()

    git_baseline, commands = baseline(root, memories, cited_words, args.baseline_sample)
    sampled = f" (extrapolated from {commands} commands)" if args.baseline_sample else ""

    cold_ok = cli <= GOAL_COLD
    change_ok = percentile(rechecks, 0.95) <= GOAL_CHANGE
    print(f"project: {len(project.modules):,} files, {project.commits} commits; "
          f"{args.memories} memories citing {len(cited_words(memories))} distinct identifiers "
          f"and {len(planted.present_paths) + len(planted.missing_paths)} paths")  # fmt: skip
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} at the end")
    print()
    print("| measure | time | vs baseline |")
    print("|---|---:|---:|")
    print(
        f"| cold, CLI (`memdir lint --project`) | {fmt(cli)} | {git_baseline / cli:.0f}× faster |"
    )
    print(f"| cold, in process | {fmt(in_process)} | {git_baseline / in_process:.0f}× faster |")
    print(f"| list the project alone (git) | {fmt(listed)} | |")
    print(f"| look up the cited words alone (grep) | {fmt(looked_up)} | |")
    print(f"| re-check after one file changes, p50 | {fmt(percentile(rechecks, 0.5))} | |")
    print(f"| re-check after one file changes, p95 | {fmt(percentile(rechecks, 0.95))} | |")
    print(f"| of which: Project.update_file, p95 | {fmt(percentile(updates, 0.95))} | |")
    if relint_times:
        print(f"| of which: a re-lint (when a finding can change), median | "
              f"{fmt(statistics.median(relint_times))} | |")  # fmt: skip
    print(f"| baseline: a git command per citation{sampled} | {fmt(git_baseline)} | 1× |")
    print()
    print(
        f"{len(relint_times)} of {len(rechecks)} changes could change a finding and were re-linted"
    )
    if rechecked:
        print(
            f"files checked again per re-check (memories and MEMORY.md): median "
            f"{statistics.median(rechecked):g}, at most {max(rechecked)} (of {args.memories + 1})"
        )
    print(f"goal cold ≤ {GOAL_COLD:.0f} s (CLI): {'pass' if cold_ok else 'FAIL'}")
    print(f"goal re-check ≤ {GOAL_CHANGE * 1000:.0f} ms (p95): {'pass' if change_ok else 'FAIL'}")
    for error in errors:
        print(f"wrong findings: {error}")
    return 0 if cold_ok and change_ok and not errors else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", 1)[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--commits", type=int, default=400)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument(
        "--baseline-sample", type=int, default=0, metavar="N",
        help="time N identifiers and N paths of the baseline and extrapolate (default: all)",
    )  # fmt: skip
    parser.add_argument("--keep", type=Path, help="generate here and keep it (default: a temp dir)")
    args = parser.parse_args(argv)

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="memdir-fresh-"))
    root, memories = scratch / "project", scratch / "memory"
    started = time.perf_counter()
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(memories, ignore_errors=True)
    root.mkdir(parents=True)
    try:
        project = generate_project(root, args.files, args.commits, args.seed)
        planted = generate_memories(memories, project, args.memories, args.seed)
        print(
            f"generated {len(project.modules):,} files, {project.commits} commits "
            f"({len(project.renamed)} renamed, {len(project.deleted)} deleted, "
            f"{len(project.removed_names)} functions removed) and {args.memories} memories "
            f"in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        return run(args, root, memories, project, planted)
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
