"""Score memdir's rules on real memory directories against verdicts judged by hand.

Public memory directories are written by strangers and are never committed here: collect them
into a folder outside the repository and keep the verdicts beside them. This script lints every
directory of that folder, matches each finding with its verdict, and prints each rule's
precision (right / judged), so a rule's place in the default set rests on measurement.

The folder (``SAMPLE``) holds:

* ``manifest.json``, a list of ``{"local": "dev/owner__repo__memory", "set": "dev",
  "format": "claude-code", "language": "en", ...}``; without it every folder holding a
  ``MEMORY.md`` or ``*.md`` files directly is a directory of the set ``all``;
* for ``--project``, ``projects/<local>/``: the repository the directory came from (the rules
  that check citations against the project need its files), or ``projects/<local>/<name>/``
  with the repository's name, the folder a clone gets (instructions written on the author's
  machine name the dir by an absolute path through it);
* ``verdicts.jsonl`` (or ``--verdicts FILE``): one judged finding a line,
  ``{"key": ..., "verdict": "right" | "wrong", "note": "..."}``.

A finding's key is ``local|path|code|line``: the verdict survives a rewording of the message,
and a finding that moves to another line is judged again. A second finding of the same code on
the same line (two paths cited on one line) gets ``|c<column>`` appended, in column order.
``--todo FILE`` writes every finding without a verdict, with its line's text, for judging.

Usage::

    .venv/bin/python benchmarks/real_dirs.py ~/memdir-sample --set dev --project
    .venv/bin/python benchmarks/real_dirs.py ~/memdir-sample --todo /tmp/todo.jsonl
    .venv/bin/python benchmarks/real_dirs.py ~/memdir-sample --project --preview \\
        --markdown dev heldout heldout2

``--markdown SET ...`` prints the table of docs/real-dirs.md: right / judged per rule and set,
and over every set.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Finding:
    local: str
    path: str
    code: str
    line: int
    message: str
    #: Set on a second finding of the code on the line (see the module).
    extra: str = ""

    @property
    def key(self) -> str:
        return f"{self.local}|{self.path}|{self.code}|{self.line}{self.extra}"


def directories(sample: Path, wanted: str) -> list[dict[str, Any]]:
    """The sample's directories (its manifest's entries), those of set ``wanted`` or all."""
    manifest = sample / "manifest.json"
    if manifest.is_file():
        entries: list[dict[str, Any]] = json.loads(manifest.read_text(encoding="utf-8"))
    else:
        entries = [
            {"local": p.relative_to(sample).as_posix(), "set": "all", "format": "unknown"}
            for p in sorted(sample.iterdir())
            if p.is_dir() and any(p.glob("*.md"))
        ]
    return [e for e in entries if wanted in ("all", e.get("set"))]


#: How ``memdir lint`` starts the stderr line of a directory it leaves alone.
NOTICE_PREFIX = "memdir lint: notice: "
#: In the notice of a directory read by the project's instructions (not another format).
READING = ": read by the project's instructions"


def project_root(sample: Path, entry: dict[str, Any]) -> Path:
    """The copy of the directory's repository: ``projects/<local>/<name>`` when it is kept
    under the repository's name (the manifest's ``repo``), else ``projects/<local>``."""
    base = sample / "projects" / entry["local"]
    name = str(entry.get("repo", "")).rpartition("/")[2]
    return base / name if name and (base / name).is_dir() else base


def linted_root(sample: Path, entry: dict[str, Any], project: bool) -> Path:
    """The directory to lint: with ``--project``, the memory dir's copy inside its project
    (``<project>/<dir>``, the manifest's ``dir``) when there is one, so that the project
    leaves its own memory dir out, as it does for a memory dir kept in a repository (a copy
    outside would vouch for every word the memory cites); else ``SAMPLE/<local>`` (also for a
    workspace whose memory is the repository's root, ``dir`` ``.``: its copy is the files the
    sample took, not the whole repository)."""
    inside = project_root(sample, entry) / entry.get("dir", ".")
    if project and entry.get("dir", ".") != "." and inside.is_dir():
        return inside
    return sample / entry["local"]


def lint(sample: Path, entry: dict[str, Any], project: bool, preview: bool) -> dict[str, Any]:
    """``memdir lint --format json`` of one directory (this interpreter's memdir)."""
    root = linted_root(sample, entry, project)
    command = [sys.executable, "-m", "memdir", "lint", "--format", "json"]
    if preview:
        command.append("--preview")
    if project and project_root(sample, entry).is_dir():
        command += ["--project", str(project_root(sample, entry))]
    proc = subprocess.run(
        [*command, str(root)], capture_output=True, text=True, timeout=600, check=False
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"memdir lint failed on {root} ({proc.returncode}): {proc.stderr}")
    # A directory memdir recognises as another agent's memory gives no finding (the JSON stays an
    # array) and one notice on stderr: `memdir lint: notice: DIR: looks like ...`; one read by
    # the project's instructions is checked without the auto memory rules, with a notice too.
    notices = [line for line in proc.stderr.splitlines() if line.startswith(NOTICE_PREFIX)]
    reading = [line for line in notices if READING in line]
    return {
        "diagnostics": json.loads(proc.stdout),
        "notice": "\n".join(line for line in notices if line not in reading),
        "reading": "\n".join(reading),
    }


def findings_of(entry: dict[str, Any], report: dict[str, Any], root: Path) -> list[Finding]:
    root = root.resolve()
    found = []
    seen: set[str] = set()
    rows = sorted(
        report.get("diagnostics", []),
        key=lambda r: (r["path"], r["code"], int(r["line"]), int(r.get("column", 0))),
    )
    for row in rows:
        path = Path(row["path"])
        rel = path.resolve().relative_to(root).as_posix() if path.is_absolute() else row["path"]
        if rel.startswith(root.name + "/") and not (root / rel).exists():
            rel = rel.split("/", 1)[1]  # named from the dir's parent: memory/notes.md
        finding = Finding(entry["local"], rel, row["code"], int(row["line"]), row["message"])
        if finding.key in seen:
            finding = replace(finding, extra=f"|c{row.get('column', 0)}")
        seen.add(finding.key)
        found.append(finding)
    return found


def line_text(sample: Path, finding: Finding) -> str:
    try:
        lines = (sample / finding.local / finding.path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return lines[finding.line - 1][:400] if 0 < finding.line <= len(lines) else ""


Score = tuple[
    dict[str, dict[str, Any]],
    collections.Counter[str],
    list[str],
    collections.Counter[str],
    list[dict[str, Any]],
]


def score(
    sample: Path,
    entries: list[dict[str, Any]],
    verdicts: dict[str, str],
    project: bool,
    preview: bool,
) -> Score:
    """Lint ``entries`` and match their findings with ``verdicts``: (per rule findings, right,
    wrong, unjudged and precision; notices by format; the directories read by the project's
    instructions; findings by format; the findings without a verdict)."""
    by_code: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    notices: collections.Counter[str] = collections.Counter()
    reading: list[str] = []
    by_format: collections.Counter[str] = collections.Counter()
    todo: list[dict[str, Any]] = []
    for entry in entries:
        report = lint(sample, entry, project, preview)
        if report.get("notice"):
            notices[entry.get("format", "unknown")] += 1
        if report.get("reading"):
            reading.append(entry["local"])
        for finding in findings_of(entry, report, linted_root(sample, entry, project)):
            verdict = verdicts.get(finding.key)
            by_format[entry.get("format", "unknown")] += 1
            by_code[finding.code]["findings"] += 1
            by_code[finding.code][verdict or "unjudged"] += 1
            if verdict is None:
                todo.append(
                    {
                        "key": finding.key,
                        "code": finding.code,
                        "message": finding.message,
                        "text": line_text(sample, finding),
                        "format": entry.get("format"),
                        "language": entry.get("language"),
                    }
                )
    table = {
        code: {
            "findings": c["findings"],
            "right": c["right"],
            "wrong": c["wrong"],
            "unjudged": c["unjudged"],
            "precision": round(c["right"] / (c["right"] + c["wrong"]), 3)
            if c["right"] + c["wrong"]
            else None,
        }
        for code, c in sorted(by_code.items())
    }
    return table, notices, reading, by_format, todo


def markdown(
    sample: Path, sets: list[str], verdicts: dict[str, str], project: bool, preview: bool
) -> str:
    """The per-rule table of docs/real-dirs.md: right / judged per set ("of N" where not every
    finding was judged, "N (none judged)" where none was), and over every set."""
    from memdir.lint.rules import RULES

    tables = {}
    sizes = {}
    for name in sets:
        entries = directories(sample, name)
        sizes[name] = sum(1 for e in entries if e.get("format", "claude-code") == "claude-code")
        tables[name] = score(sample, entries, verdicts, project, preview)[0]

    def cell(row: dict[str, Any] | None) -> str:
        if not row:
            return "–"
        judged = row["right"] + row["wrong"]
        if not judged:
            return f"{row['findings']} (none judged)"
        more = f" of {row['findings']}" if row["findings"] != judged else ""
        return f"{row['right']}/{judged}{more}"

    head = " | ".join(f"{name} ({sizes[name]})" for name in sets)
    lines = [
        f"| code | default | {head} | all judged |",
        "|---|---|" + "---:|" * (len(sets) + 1),
    ]
    for code in sorted({code for table in tables.values() for code in table}):
        right = sum(t.get(code, {}).get("right", 0) for t in tables.values())
        wrong = sum(t.get(code, {}).get("wrong", 0) for t in tables.values())
        total = f"{right}/{right + wrong} ({right / (right + wrong):.1%})" if right + wrong else "–"
        rule = RULES.get(code)
        default = "preview" if rule is not None and rule.preview else "on"
        cells = " | ".join(cell(tables[name].get(code)) for name in sets)
        lines.append(f"| [{code}](rules/{code}.md) | {default} | {cells} | {total} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample", type=Path, help="the folder of real memory directories")
    parser.add_argument("--set", default="all", help="only the directories of this set")
    parser.add_argument("--verdicts", type=Path, help="default: SAMPLE/verdicts.jsonl")
    parser.add_argument("--project", action="store_true", help="check citations too")
    parser.add_argument("--preview", action="store_true", help="run the preview rules too")
    parser.add_argument("--todo", type=Path, help="write the findings without a verdict here")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.add_argument(
        "--markdown",
        nargs="+",
        metavar="SET",
        help="print docs/real-dirs.md's table: right / judged per rule for each of these sets",
    )
    args = parser.parse_args(argv)
    sample: Path = args.sample
    verdict_file = args.verdicts or sample / "verdicts.jsonl"
    verdicts: dict[str, str] = {}
    if verdict_file.is_file():
        for line in verdict_file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                verdicts[row["key"]] = row["verdict"]

    if args.markdown:
        print(markdown(sample, args.markdown, verdicts, args.project, args.preview))
        return 0
    entries = directories(sample, args.set)
    table, notices, reading, by_format, todo = score(
        sample, entries, verdicts, args.project, args.preview
    )
    if args.todo:
        args.todo.write_text(
            "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in todo), encoding="utf-8"
        )
    if args.json:
        print(
            json.dumps(
                {
                    "dirs": len(entries),
                    "notices": notices,
                    "read_by_instructions": reading,
                    "findings": by_format,
                    "rules": table,
                },
                indent=1,
            )
        )
        return 0
    print(f"{len(entries)} directories ({args.set}); notices: {dict(notices) or 'none'}")
    print(f"read by the project's instructions: {len(reading)}")
    print(f"findings by format: {dict(by_format) or 'none'}")
    print(f"{'code':8} {'findings':>8} {'right':>6} {'wrong':>6} {'unjudged':>8} {'precision':>9}")
    for code, row in table.items():
        shown = "-" if row["precision"] is None else f"{row['precision']:.1%}"
        print(
            f"{code:8} {row['findings']:>8} {row['right']:>6} {row['wrong']:>6} "
            f"{row['unjudged']:>8} {shown:>9}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
