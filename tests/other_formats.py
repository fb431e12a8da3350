"""Synthetic memory directories of other agents (written for these tests, in our own words).

Each is the smallest layout that shows its agent's signature, with the kind of text that made
memdir misfire before it recognised them: a MEMORY.md that is no index, files without
frontmatter that ``--fix`` would have "repaired". Shared by the core, CLI, server, hook and MCP
tests (``tests`` is on pytest's ``pythonpath``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

HERMES = {
    "MEMORY.md": (
        "The staging box reboots every Sunday at 03:00; never schedule long jobs across it.\n"
        "§\n"
        "Builds use the shared cache at /srv/cache; clear it only with the team's consent.\n"
        "§\n"
        "Replies go to the project channel, never to direct messages.\n"
    ),
    "USER.md": "Name: Sam. Prefers short answers, metric units.\n§\nWorks from Lisbon.\n",
}

OPENCLAW = {
    "SOUL.md": "# SOUL.md - Who You Are\n\nBe useful, not chatty. Have opinions.\n",
    "IDENTITY.md": "# IDENTITY.md\n\n- **Name:** Pebble\n- **Vibe:** calm\n",
    "AGENTS.md": "# AGENTS.md - Your Workspace\n\nRead SOUL.md first, then USER.md.\n",
    "USER.md": "# USER.md\n\n- Name: Sam\n- Timezone: Europe/Lisbon\n",
    "MEMORY.md": (
        "# Long-Term Memory\n\n## People\n- Sam likes terse status updates.\n\n"
        "## Lessons\n- Ask before deleting anything under ~/archive.\n"
    ),
    "memory/2026-01-05.md": "# 2026-01-05\n\n- Set up the calendar sync.\n",
    "memory/2026-01-06.md": "# 2026-01-06\n\n- Calendar sync broke after the DST change.\n",
}

AEON = {
    "MEMORY.md": (
        "# Long-term Memory\n*Last consolidated: 2026-02-01*\n\n## About This Agent\n"
        "Runs on a schedule and posts a digest of new papers.\n\n## Lessons Learned\n"
        "- The digest must stay under 4000 characters.\n"
    ),
    "logs/2026-01-30.md": "# 2026-01-30\n\n## Digest\n- Sent 5 items.\n",
    "logs/2026-01-31.md": "# 2026-01-31\n\n## Digest\n- Feed timed out, retried once.\n",
    "watched-repos.md": "# Watched Repos\n- example/tool\n",
}

CLINE = {
    "projectbrief.md": "# Project Brief\n\nA tiny invoicing app for freelancers.\n",
    "productContext.md": "# Product Context\n\nFreelancers lose track of unpaid invoices.\n",
    "activeContext.md": "# Active Context\n\nWorking on PDF export.\n",
    "systemPatterns.md": "# System Patterns\n\nOne service, one database.\n",
    "techContext.md": "# Tech Context\n\nPython 3.12, SQLite.\n",
    "progress.md": "# Progress\n\n- [x] invoices\n- [ ] PDF export\n",
}

ROO = {
    "activeContext.md": "# Active Context\n\nMigrating the queue.\n",
    "decisionLog.md": "# Decision Log\n\n- 2026-01-02: chose Redis streams over Kafka.\n",
    "productContext.md": "# Product Context\n\nA job runner for a small team.\n",
    "progress.md": "# Progress\n\n- queue migration half done\n",
    "systemPatterns.md": "# System Patterns\n\nWorkers pull, never push.\n",
}

KILO = {
    "brief.md": "# Brief\n\nAn inventory tracker for a small shop.\n",
    "product.md": "# Product\n\nShop owners count stock by hand today.\n",
    "context.md": "# Context\n\nBarcode scanning is next.\n",
    "architecture.md": "# Architecture\n\nA web app over PostgreSQL.\n",
    "tech.md": "# Tech\n\nTypeScript, Node 22.\n",
}

CURSOR_BANK = {
    "tasks.md": "# Tasks\n\n- [ ] add rate limiting\n",
    "activeContext.md": "# Active Context\n\nRate limiting design.\n",
    "progress.md": "# Progress\n\nBuild mode finished for auth.\n",
    "projectbrief.md": "# Project Brief\n\nA public API for weather data.\n",
    "creative/creative-rate-limits.md": "# Creative: rate limits\n\nToken bucket per key.\n",
    "reflection/reflection-auth.md": "# Reflection: auth\n\nKeys rotate monthly.\n",
}

SERENA = {
    "project_overview.md": "# Overview\n\nA CLI that converts subtitles between formats.\n",
    "suggested_commands.md": "# Commands\n\n- `make test`\n- `make lint`\n",
    "code_style_and_conventions.md": "# Style\n\nType hints everywhere.\n",
    "task_completion_checklist.md": "# When done\n\nRun the tests and the linter.\n",
}

DATED_LOGS = {
    "MEMORY.md": (
        "# Sessions\n\n| Date | Summary |\n|---|---|\n"
        "| [2026-03-01](2026-03-01.md) | set up CI |\n"
        "| [2026-03-02](2026-03-02.md) | fixed flaky test |\n"
        "| [2026-03-03](2026-03-03.md) | release prep |\n"
    ),
    "2026-03-01.md": "## Session Summary\nSet up CI.\n",
    "2026-03-02.md": "## Session Summary\nFixed the flaky upload test.\n",
    "2026-03-03.md": "## Session Summary\nPrepared the release notes.\n",
}

#: A repository's notes for the agent, kept by hand: an index and notes with no frontmatter,
#: which the project's CLAUDE.md tells the agent to read at the start of each session.
HAND_KEPT = {
    "MEMORY.md": (
        "# Project notes\n\n"
        "- [Last session](last_session.md): where the previous session stopped\n"
        "- [Conventions](conventions.md): naming and layout rules for the API\n"
        "- [Open questions](open_questions.md): what the team has not decided yet\n"
    ),
    "last_session.md": "# Last session\n\nStopped halfway through the export endpoint.\n",
    "conventions.md": "# Conventions\n\n- Routes are plural nouns.\n- Dates are ISO 8601.\n",
    "open_questions.md": "# Open questions\n\n- Do we paginate by cursor or by page?\n",
}

#: Each format's key (``memdir.agent.formats.Recognised.key``) and its directory.
OTHER_FORMATS: Mapping[str, Mapping[str, str]] = {
    "hermes": HERMES,
    "openclaw": OPENCLAW,
    "aeon": AEON,
    "cline-memory-bank": CLINE,
    "roo-memory-bank": ROO,
    "kilo-memory-bank": KILO,
    "cursor-memory-bank": CURSOR_BANK,
    "serena": SERENA,
    "dated-logs": DATED_LOGS,
    "hand-kept": HAND_KEPT,
}


def claude_topic(name: str, description: str, type_: str = "project") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\nBody.\n"


#: Claude Code directories that share a name or two with the formats above: never recognised.
CLAUDE_CODE_LOOKALIKES: Mapping[str, Mapping[str, str]] = {
    "empty": {},
    "new, no index yet": {"deploy.md": claude_topic("deploy", "how releases reach production")},
    "an index alone": {"MEMORY.md": "- [Deploy](deploy.md) — how releases reach production\n"},
    "a few extra files": {
        "MEMORY.md": (
            "- [Overview](project_overview.md) — what the service does and who runs it\n"
            "- [Progress](progress.md) — the migration's state, step by step\n"
            "- [Brief](brief.md) — the customer's brief for the redesign\n"
        ),
        "project_overview.md": claude_topic("overview", "what the service does and who runs it"),
        "progress.md": claude_topic("progress", "the migration's state, step by step"),
        "brief.md": claude_topic("brief", "the customer's brief for the redesign"),
        "tech.md": claude_topic("tech", "the stack and why each piece was chosen"),
        "activeContext.md": "# scratch notes kept by hand\n",
        "techContext.md": "# more scratch\n",
        "USER.md": "Notes about me, not a memory.\n",
    },
    "dated session memories": {
        "MEMORY.md": (
            "- [Jan 5](2026-01-05-retro.md) — what the January retro decided about releases\n"
            "- [Jan 6](2026-01-06-incident.md) — the DNS incident and the runbook change\n"
            "- [Jan 7](2026-01-07-plan.md) — the plan for the search rewrite\n"
        ),
        "2026-01-05-retro.md": claude_topic("retro", "what the January retro decided"),
        "2026-01-06-incident.md": claude_topic("incident", "the DNS incident and the runbook"),
        "2026-01-07-plan.md": claude_topic("plan", "the plan for the search rewrite"),
    },
    "new, two memories written by hand": {
        "MEMORY.md": (
            "- [Deploy](deploy.md) — how releases reach production\n"
            "- [Style](style.md) — the team's code style\n"
        ),
        "deploy.md": "# Deploy\n\nTag, then let CI publish.\n",
        "style.md": "# Style\n\nFour spaces, no tabs.\n",
    },
    "notes by hand beside one memory of the agent": {
        **HAND_KEPT,
        "api_owner.md": claude_topic("api owner", "who decides on breaking API changes"),
    },
    "a section sign in prose": {
        "MEMORY.md": "- [Law](law.md) — which § of the statute applies to refunds\n",
        "law.md": claude_topic("law", "which section of the statute applies to refunds"),
    },
}


def make_format_dir(root: Path, files: Mapping[str, str]) -> Path:
    """Write ``files`` (relative path → text) under ``root`` and return it."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative path → bytes): to show that nothing was written."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
