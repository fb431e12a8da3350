"""Generate realistic memory directories with planted problems, for the lint benchmark.

Seeded and deterministic: the same ``--seed`` and ``--files`` give byte-identical directories with
identical modification times, so benchmark runs compare like with like. A generated directory
looks like one an agent grew over a year: topic files of the four types (about a tenth in
subfolders, some in Chinese, a few with ``metadata.type`` or ``modified``), bodies of a few
hundred bytes to a few KB with a tail of long ones, and a MEMORY.md that links nearly every
file. About one file in twenty carries a planted problem (every lint code is represented), and a
few decoys that must *not* be flagged (placeholder keys, ``[[links]]`` to unwritten memories).

The planted problems are listed in ``PLANTED.json`` next to MEMORY.md (lint ignores non-``.md``
files), so tests and the benchmark can check that lint finds what was planted.

Usage::

    python benchmarks/gen_memdir.py --files 2000 --out benchmarks/data/memdir-2000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import string
from dataclasses import dataclass, field
from pathlib import Path

TYPES = ("user", "feedback", "project", "reference")
SUBFOLDERS = ("reference", "projects", "people", "ops")
#: One year of history ending at a fixed instant, so mtimes never depend on when we ran.
END_TIME = 1_780_000_000.0
SPAN_SECONDS = 365 * 86_400

SUBJECTS = (
    "release train",
    "payments retry",
    "checkout latency",
    "feature flags",
    "schema migration",
    "API versioning",
    "on-call rotation",
    "mobile build",
    "search ranking",
    "billing export",
    "data retention",
    "incident review",
    "code review",
    "commit messages",
    "test fixtures",
    "staging deploys",
    "error budget",
    "cache invalidation",
    "rate limiting",
    "audit logging",
    "partner webhooks",
    "tax rules",
    "invoice PDFs",
    "push notifications",
    "login throttling",
    "dark launch",
    "canary hosts",
    "backfill jobs",
    "queue consumers",
    "GraphQL gateway",
)
VERBS = (
    "must go through",
    "is owned by",
    "is frozen during",
    "needs sign-off from",
    "runs before",
    "is tracked in",
    "breaks without",
    "was moved to",
    "depends on",
    "is blocked by",
)
OBJECTS = (
    "the platform team",
    "the weekly release",
    "the finance review",
    "the Linear project OPS",
    "the Grafana board 'Core latency'",
    "a feature flag",
    "the staging cluster",
    "Ana's approval",
    "the quarterly audit",
    "the PagerDuty schedule",
    "the nightly backfill",
    "the legal hold list",
)
REASONS = (
    "a change merged during review once shipped in a hotfix and had to be rolled back",
    "the last incident was found from this panel within minutes",
    "partners pinned old clients for a year and a silent change cost a contract",
    "the auditors asked for it twice and it is now part of the checklist",
    "a mocked test passed while the real migration broke production",
    "long answers buried the decision the user needed",
)
ZH_SUBJECTS = ("数据保留", "值班升级", "发布冻结", "支付迁移", "提交信息", "接口版本", "日志清理")
ZH_CLAUSES = (
    "用户行为日志只保留 90 天，新表要配置自动清理任务",
    "线上事故先呼叫当前值班工程师，30 分钟无响应再升级",
    "提审期间主干冻结，只合并批准的热修复",
    "新代码只能使用新的支付接口，旧接口年底下线",
    "标题用英文祈使句，正文写清楚原因",
)

#: Planted problem kinds and how often each occurs (per topic file).
RATES: dict[str, float] = {
    "MEM001": 0.010,  # an over-long index line
    "MEM005": 0.005,  # an index entry for a file never written
    "MEM006": 0.005,  # the same file linked twice
    "MEM007": 0.002,  # a URL / .. / absolute link in the index
    "MEM101": 0.010,  # no frontmatter
    "MEM102": 0.005,  # broken YAML
    "MEM103": 0.010,  # missing description
    "MEM104": 0.010,  # unknown type
    "MEM105": 0.002,  # frontmatter closed only after line 30
    "MEM106": 0.020,  # body far past the 4096-byte injection cap
    "MEM107": 0.020,  # orphan: not in the index
    "MEM109": 0.010,  # vague description
    "MEM110": 0.003,  # a secret in the body
    "MEM111": 0.005,  # same name as another file
}


#: Codes planted in MEMORY.md (recorded with path MEMORY.md), not in the topic file.
INDEX_CODES = frozenset(("MEM001", "MEM005", "MEM006", "MEM007"))


@dataclass
class Planted:
    code: str
    path: str
    note: str = ""


@dataclass
class Generated:
    root: Path
    files: int
    planted: list[Planted] = field(default_factory=list)


def _slug(text: str) -> str:
    out = "".join(c.lower() if c.isalnum() and c.isascii() else "-" for c in text)
    return "-".join(part for part in out.split("-") if part)


def _token(
    rng: random.Random, length: int, alphabet: str = string.ascii_letters + string.digits
) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _secret(rng: random.Random) -> tuple[str, str]:
    """A pattern-valid, random (never real) credential and the sentence that leaks it."""
    kind = rng.choice(("anthropic", "github", "aws", "slack", "url", "assign"))
    if kind == "anthropic":
        key = "sk-ant-api03-" + _token(rng, 93, string.ascii_letters + string.digits + "-_") + "AA"
        return kind, f"The staging key is {key} (rotate it after the demo)."
    if kind == "github":
        return kind, f"CI pushes with ghp_{_token(rng, 36)} from the bot account."
    if kind == "aws":
        key = "AKIA" + _token(rng, 16, string.ascii_uppercase + string.digits)
        secret = _token(rng, 40, string.ascii_letters + string.digits + "/+")
        return kind, f"aws_access_key_id = {key}\naws_secret_access_key = {secret}"
    if kind == "slack":
        return kind, f"Alerts post via xoxb-{rng.randint(10**10, 10**11)}-{_token(rng, 24)}."
    if kind == "url":
        return kind, f"Reports DB: postgres://report:{_token(rng, 18)}@db.internal:5432/reports"
    return kind, f'deploy_token = "{_token(rng, 32)}"'


PEOPLE = ("Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea")
NOUNS = (
    "alert",
    "backlog",
    "budget",
    "build",
    "cache",
    "changelog",
    "checklist",
    "client",
    "cluster",
    "contract",
    "cron",
    "dashboard",
    "dataset",
    "deadline",
    "dependency",
    "deploy",
    "diff",
    "endpoint",
    "export",
    "fixture",
    "flag",
    "gateway",
    "handoff",
    "hotfix",
    "import",
    "index",
    "invoice",
    "job",
    "ledger",
    "lockfile",
    "migration",
    "mirror",
    "monorepo",
    "notebook",
    "outage",
    "pager",
    "partner",
    "payload",
    "pipeline",
    "policy",
    "postmortem",
    "quota",
    "queue",
    "release",
    "replica",
    "report",
    "review",
    "rollback",
    "runbook",
    "sandbox",
    "schema",
    "secret store",
    "shard",
    "snapshot",
    "spec",
    "sprint",
    "staging",
    "template",
    "ticket",
    "timeout",
    "token budget",
    "trace",
    "vendor",
    "webhook",
    "workflow",
    "worker",
)
QUALIFIERS = (
    "before the Friday cut",
    "only after sign-off",
    "during the freeze",
    "every second Monday",
    "for EU customers",
    "in the legacy stack",
    "on mobile only",
    "under the new SLA",
    "when the pager fires",
    "while the audit runs",
    "unless finance agrees",
    "from Q3 onwards",
)


def _description(rng: random.Random, subject: str, zh: bool, number: int) -> str:
    if zh:
        owner = rng.choice(PEOPLE)
        parts = rng.sample([p for c in ZH_CLAUSES for p in c.split("，")], 2)
        first, second = rng.sample(NOUNS, 2)
        return (
            f"{rng.choice(ZH_SUBJECTS)}：{'，'.join(parts)}，涉及 {first} 和 {second}"
            f"（第 {number} 号，{owner} 负责）"
        )
    words = rng.sample(NOUNS, 3)
    return (
        f"{subject} {rng.choice(VERBS)} {rng.choice(OBJECTS)} — {words[0]} and {words[1]} "
        f"{rng.choice(QUALIFIERS)}, {rng.choice(PEOPLE)} owns the {words[2]} (#{number})"
    )


def _body(rng: random.Random, title: str, zh: bool, long: bool) -> str:
    paragraphs = [f"# {title}", ""]
    count = rng.randint(1, 4) if not long else rng.randint(60, 160)
    for _ in range(count):
        if zh:
            paragraphs.append(rng.choice(ZH_CLAUSES) + "。" + rng.choice(ZH_CLAUSES) + "。")
        else:
            paragraphs.append(
                f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}. "
                f"{rng.choice(REASONS).capitalize()}."
            )
        paragraphs.append("")
    paragraphs.append(f"**Why:** {rng.choice(REASONS)}.")
    paragraphs.append("")
    paragraphs.append(
        f"**How to apply:** check {rng.choice(OBJECTS)} before touching {rng.choice(SUBJECTS)}."
    )
    if rng.random() < 0.2:
        paragraphs.append(f"See also [[{_slug(rng.choice(SUBJECTS))}-notes]].")
    if rng.random() < 0.05:
        # Decoys: placeholders that look like keys but are not secrets.
        paragraphs.append("Set ANTHROPIC_API_KEY=sk-ant-... or `<your-api-key>` locally.")
    return "\n".join(paragraphs) + "\n"


def _frontmatter(fields: dict[str, str], nested_type: bool) -> str:
    lines = ["---"]
    for key, value in fields.items():
        if key == "type" and nested_type:
            lines.append("metadata:")
            lines.append(f"  type: {value}")
        else:
            lines.append(f"{key}: {value}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def generate(root: Path, files: int, seed: int = 1, invalid_files: bool = True) -> Generated:
    """Write a memory directory with ``files`` topic files under ``root`` (replaced if present).

    ``invalid_files`` adds a binary ``.md`` file and a Latin-1 one (from 100 files up); the
    benchmark leaves them out because one of the peer linters stops at the first such file.
    """
    rng = random.Random(seed)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    result = Generated(root, files)
    entries: list[str] = []
    #: (path, name) and description of every file so far, for planted duplicates.
    names: list[tuple[str, str]] = []
    originals: list[str] = []
    mtimes: dict[str, float] = {}

    for number in range(files):
        kind = TYPES[number % 4]
        subject = rng.choice(SUBJECTS)
        zh = rng.random() < 0.1
        name = f"{kind}-{_slug(subject)}-{number:05d}"
        folder = rng.choice(SUBFOLDERS) + "/" if rng.random() < 0.1 else ""
        rel = f"{folder}{name}.md"
        title = f"{subject.capitalize()} ({number})"
        description = _description(rng, subject, zh, number)
        plant = {code for code, rate in RATES.items() if rng.random() < rate}
        # A file whose frontmatter is broken has no fields to get wrong: keep one such plant.
        broken = sorted(plant & {"MEM101", "MEM102", "MEM105"})
        if broken:
            plant -= {"MEM101", "MEM102", "MEM105", "MEM103", "MEM104", "MEM109", "MEM111"}
            plant.add(broken[0])
        if "MEM107" in plant:
            plant -= {"MEM001", "MEM006"}  # not in the index at all
        if "MEM103" in plant:
            plant.discard("MEM109")  # no description to be vague
        fields = {"name": name, "description": description, "type": kind}
        if rng.random() < 0.05:
            fields["modified"] = "2026-05-01T10:00:00Z"
        nested = rng.random() < 0.05
        planted = [Planted(code, rel) for code in sorted(plant - INDEX_CODES - {"MEM111"})]

        if "MEM103" in plant:
            del fields["description"]
        if "MEM104" in plant:
            fields["type"] = rng.choice(("Project", "projects", "note", "preferences"))
        if "MEM109" in plant:
            fields["description"] = rng.choice(("notes", "misc", "user preferences", "todo"))
        if "MEM111" in plant and names:
            # Same name as an earlier file, and a near-identical copy of its description.
            original = rng.randrange(len(names))
            fields["name"] = names[original][1]
            planted.append(Planted("MEM111", rel, "name"))
            planted.append(Planted("MEM111", names[original][0], "name"))
            if "description" in fields and "MEM109" not in plant and originals[original]:
                fields["description"] = originals[original].replace(" the ", " our ", 1)
        if not broken:  # only a readable name can be duplicated
            names.append((rel, fields["name"]))
            originals.append(fields.get("description", "") if "MEM109" not in plant else "")

        body = _body(rng, title, zh, long="MEM106" in plant)
        if "MEM110" in plant:
            body += "\n" + _secret(rng)[1] + "\n"
        if "MEM101" in plant:
            text = body
        elif "MEM102" in plant:
            text = f'---\nname: {name}\ndescription: "unclosed\ntype: {kind}\n---\n{body}'
        elif "MEM105" in plant:
            padding = "".join(f"note_{i}: filler\n" for i in range(32))
            text = _frontmatter(fields, nested).replace("---\n", "---\n" + padding, 1)
            text = text + body
        else:
            text = _frontmatter(fields, nested) + body

        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        mtimes[rel] = END_TIME - rng.random() * SPAN_SECONDS
        result.planted.extend(planted)

        if "MEM107" not in plant:
            line = f"- [{title}]({rel})"
            if "description" in fields:
                # The agent writes a hook shorter than the description: cut at a word boundary.
                hook = fields["description"]
                room = 140 - len(line) - 3
                if len(hook) > room:
                    hook = hook[:room].rsplit(" ", 1)[0]
                line += f" — {hook}"
            if "MEM001" in plant:
                line += " — " + " ".join(rng.choice(REASONS) for _ in range(3))
                result.planted.append(Planted("MEM001", "MEMORY.md", rel))
            entries.append(line)
            if "MEM006" in plant:
                entries.append(f"- [{title} again]({rel}) — linked twice")
                result.planted.append(Planted("MEM006", "MEMORY.md", rel))
        if "MEM005" in plant:
            entries.append(f"- [Never written]({kind}-never-written-{number:05d}.md) — planned")
            result.planted.append(Planted("MEM005", "MEMORY.md", f"{number}"))
        if "MEM007" in plant:
            bad = rng.choice(("https://example.com/notes.md", "../outside.md", "/etc/notes.md"))
            entries.append(f"- [Bad link]({bad}) — somewhere else")
            result.planted.append(Planted("MEM007", "MEMORY.md", bad))

    # A few files that are not valid text at all.
    invalid = invalid_files and files >= 100
    if invalid:
        (root / "broken-binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        (root / "latin1-notes.md").write_bytes(
            b"---\nname: latin1-notes\ndescription: caf\xe9 opening hours for the team offsite\n"
            b"type: reference\n---\nThe caf\xe9 opens at 8.\n"
        )
        mtimes["broken-binary.md"] = END_TIME - SPAN_SECONDS
        mtimes["latin1-notes.md"] = END_TIME - SPAN_SECONDS
        result.planted.append(Planted("MEM113", "broken-binary.md"))
        result.planted.append(Planted("MEM112", "latin1-notes.md"))

    index = ["# Memory index", ""]
    index.extend(entries)
    if invalid:
        index.append("- [Café hours](latin1-notes.md) — when the office café opens")
    # Memory content written straight into the index: a planted MEM004 paragraph.
    index.insert(
        len(index) // 2, "We decided to keep the old billing export until Q3 because finance"
    )
    index.insert(len(index) // 2 + 1, "still reconciles against it every month.")
    result.planted.append(Planted("MEM004", "MEMORY.md"))
    (root / "MEMORY.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    (root / "PLANTED.json").write_text(
        json.dumps([p.__dict__ for p in result.planted], indent=1) + "\n", encoding="utf-8"
    )
    for rel, mtime in mtimes.items():
        os.utime(root / rel, (mtime, mtime))
    os.utime(root / "MEMORY.md", (END_TIME, END_TIME))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="number of topic files")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="output dir (default benchmarks/data/memdir-N)")
    args = parser.parse_args(argv)
    out = args.out or Path(__file__).parent / "data" / f"memdir-{args.files}"
    generated = generate(out, args.files, args.seed)
    print(f"{generated.root}: {args.files} topic files, {len(generated.planted)} planted problems")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
