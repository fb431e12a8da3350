"""The diagnostic codes: one registry that the engine, the SARIF output and the docs all read.

Codes are stable: a code never changes meaning, and new codes are added at the end of their
family. ``docs/diagnostics.md`` is rendered from this table (:func:`markdown_table`), and a test
keeps the two identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdir.lint.diagnostic import Severity

Scope = Literal["index", "topic", "directory"]
Fixability = Literal["safe", "editor", "none"]


@dataclass(frozen=True)
class Rule:
    code: str
    #: Short kebab-case name (SARIF ``name``).
    name: str
    severity: Severity
    #: What the rule reads: MEMORY.md alone, one topic file, or the directory as a whole.
    scope: Scope
    #: What the diagnostic means.
    summary: str
    #: Why it matters to the agent.
    why: str
    #: An example line that triggers it, and what fixes it.
    example: str
    remedy: str
    #: ``safe``: ``memdir lint --fix`` applies the fix; ``editor``: a fix is offered as a code
    #: action for a person to accept; ``none``: no automatic fix.
    fixable: Fixability = "none"


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(
            "MEM001",
            "index-line-too-long",
            "warning",
            "index",
            "An index line is longer than the limit (150 characters, `index_line_limit`); "
            "the range is the part past the limit.",
            "The agent is told to keep each entry to one line of about 150 characters; long "
            "hooks use up the 25,000-character load budget that every entry shares.",
            "`- [Payments](payments.md) — Stripe Charges → PaymentIntents by 2027-03-31, "
            "then a long story of the whole migration…`",
            "Keep the hook to one short clause; move the detail into the topic file.",
        ),
        Rule(
            "MEM002",
            "index-past-load-cap",
            "error",
            "index",
            "MEMORY.md is over the load cap (200 lines or 25,000 UTF-16 units after stripping "
            "frontmatter and comments); reported once, on the first line not loaded, with the "
            "number of entries lost.",
            "Path A loads only the part before the cap: the agent never sees the entries past "
            "it, and nothing tells the user.",
            "line 201 of a 243-line MEMORY.md",
            "Merge or drop stale entries; rewrite the index under 140 lines.",
        ),
        Rule(
            "MEM003",
            "index-near-load-cap",
            "warning",
            "index",
            "MEMORY.md is over 140 lines or 90% of the 25,000 characters, still under the cap.",
            "The next entries the agent adds will push the oldest past the cap and out of its "
            "context; the agent itself is told to rewrite the index under 140 lines.",
            "line 141 of a 160-line MEMORY.md",
            "Merge related entries and drop stale ones before the cap is reached.",
        ),
        Rule(
            "MEM004",
            "content-in-index",
            "warning",
            "index",
            "Lines of MEMORY.md that are not index entries: paragraphs, code blocks, detail "
            "bullets, links in another form. One diagnostic per block.",
            "Content in the index is loaded into every session against the cap, yet it is not "
            "a memory: the agent cannot find it by name, update it, or recall it on path B.",
            "`We decided to keep the old billing export until Q3 because finance…`",
            "Move the text into a topic file and link it with one "
            "`- [Title](file.md) — hook` line.",
            "editor",
        ),
        Rule(
            "MEM005",
            "dangling-index-link",
            "error",
            "directory",
            "An index entry links a topic file that does not exist.",
            "The agent sees the hook every session, but reading the memory fails; it may act on "
            "the hook alone.",
            "`- [Release calendar](release-calendar.md) — …` with no release-calendar.md",
            "Write the file, fix the link, or remove the entry.",
            "editor",
        ),
        Rule(
            "MEM006",
            "duplicate-index-entry",
            "warning",
            "index",
            "The same topic file is linked by more than one entry.",
            "Each copy spends load budget, and two hooks for one file read like two memories.",
            "`- [Terse answers](feedback-terse.md)` on lines 4 and 19",
            "Keep one entry (`--fix` removes exact duplicates).",
            "safe",
        ),
        Rule(
            "MEM007",
            "bad-index-link",
            "error",
            "index",
            "An index entry links something that is not a topic file of this directory: a URL, "
            "an absolute path, a path leaving the directory with `..`, a non-`.md` file, or "
            "MEMORY.md itself.",
            "The agent reads memories from the memory dir only; such an entry is never a "
            "memory, and absolute paths break when the directory moves.",
            "`- [Notes](https://example.com/notes.md)` or `- [Old](../notes.md)`",
            "Link a `.md` file inside the memory dir with a relative path.",
        ),
        Rule(
            "MEM101",
            "no-frontmatter",
            "error",
            "topic",
            "A topic file has no YAML frontmatter.",
            "The prefetch manifest shows it without type or description, so the selector "
            "(which never sees bodies) has no reason to pick it.",
            "`# Deploy notes` as the first line",
            "Add `---` / `name:` / `description:` / `type:` / `---` (`--fix` adds a skeleton).",
            "safe",
        ),
        Rule(
            "MEM102",
            "malformed-frontmatter",
            "error",
            "topic",
            "The frontmatter is not valid YAML, or not a mapping of fields; the range is the "
            "YAML parser's error position.",
            "The agent reads no name, description or type from the file: it is an untyped, "
            "undescribed memory.",
            "`description: [unclosed, list`",
            "Fix the YAML (quote values that contain `: `, `#` or start with `[`).",
        ),
        Rule(
            "MEM103",
            "missing-field",
            "warning",
            "topic",
            "`name`, `description` or `type` is missing, empty, or not a plain string "
            "(`type` may also be nested as `metadata.type`).",
            "`description` and `type` are all the selector sees of a memory (the manifest "
            "line); `name` is what `[[name]]` links and duplicate checks use.",
            "`description:` with no value",
            "Fill in the field.",
        ),
        Rule(
            "MEM104",
            "unknown-type",
            "warning",
            "topic",
            "`type` is not one of `user`, `feedback`, `project`, `reference` (case matters); "
            "the nearest one is suggested.",
            "The agent treats any other value as no type, so the manifest line loses its "
            "`[type]` tag.",
            "`type: Project`",
            "Use the suggested type (`project`).",
            "editor",
        ),
        Rule(
            "MEM105",
            "frontmatter-beyond-scan",
            "error",
            "topic",
            "The frontmatter is not closed within the first 30 lines (or never closed).",
            "The prefetch scan reads only the first 30 lines of each file: it sees no "
            "frontmatter at all, so no description and no type.",
            "a frontmatter block whose closing `---` is on line 34",
            "Shorten the frontmatter (move notes into the body) or close it.",
        ),
        Rule(
            "MEM106",
            "body-past-injection-cap",
            "info",
            "topic",
            "The file is longer than path B injects (200 lines or 4,096 bytes); the range is "
            "the first line that is not injected.",
            "When the memory is recalled, the agent sees only the part before this line, plus "
            "a note to read the rest itself.",
            "line 201 of a long runbook, or the line that crosses byte 4,096",
            "Keep the essentials above the cut, or split the file.",
        ),
        Rule(
            "MEM107",
            "orphan",
            "warning",
            "directory",
            "A topic file that no index entry links. Reported as info when `recall_mode = "
            '"prefetch"` (the index is not injected then).',
            "On path A the agent sees only the index: a memory missing from it is invisible "
            "unless the agent happens to list the directory.",
            "`old-notes.md`, linked from nowhere",
            "Add `- [Title](old-notes.md) — hook` (`--fix` adds it, with the description as hook).",
            "safe",
        ),
        Rule(
            "MEM108",
            "outside-prefetch-window",
            "info",
            "directory",
            "The file is not among the 200 most recently modified topic files. Reported as a "
            'warning when `recall_mode = "prefetch"`.',
            "The prefetch scan offers only the 200 newest files to the selector: this one is "
            "never a candidate on path B.",
            "any file older than the 200 newest",
            "Merge or delete stale memories; touching a file moves it into the window.",
        ),
        Rule(
            "MEM109",
            "vague-description",
            "warning",
            "topic",
            "The description is too short, too generic (only words like *notes*, *misc*, "
            "*preferences*, or the file name again), or too long or multi-line for a manifest "
            "line.",
            "The selector chooses memories from their one-line descriptions alone; a vague one "
            "is never chosen, a long one crowds the manifest.",
            "`description: notes`",
            "Say what the memory covers and when it applies, in one line.",
        ),
        Rule(
            "MEM110",
            "likely-secret",
            "error",
            "topic",
            "Something that looks like a credential: API keys and tokens of common providers "
            "(Anthropic, OpenAI, AWS, GitHub, GitLab, Slack, Stripe, Google), JWTs, private "
            "key blocks, passwords in URLs, high-entropy `password`/`secret`/`token` "
            "assignments. The message never repeats the secret.",
            "Memories are injected into model context and often synced or committed; a secret "
            "there leaks to every session and every copy.",
            "`The staging key is sk-ant-api03-…`",
            "Remove it, rotate the credential, and refer to where it is stored instead.",
        ),
        Rule(
            "MEM111",
            "duplicate-memory",
            "warning",
            "directory",
            "Two topic files with the same `name`, or with near-identical descriptions "
            "(≥ 90% similar).",
            "`[[name]]` links become ambiguous, and the selector sees two near-identical "
            "manifest lines: it may surface the stale copy, and updates land in one of them.",
            "`name: user-role` in both user-role.md and people/user-role.md",
            "Merge the two files.",
        ),
        Rule(
            "MEM112",
            "not-utf8",
            "warning",
            "topic",
            "The file is not valid UTF-8; the range is the first bad byte.",
            "The agent reads undecodable bytes as U+FFFD, so this text reaches the model garbled.",
            "a file saved as Latin-1 (`caf\\xe9`)",
            "Re-save the file as UTF-8.",
        ),
        Rule(
            "MEM113",
            "unreadable-file",
            "error",
            "topic",
            "A `.md` file that cannot be read, or is binary (contains NUL bytes).",
            "The scan still lists it, but it holds no memory the agent can use.",
            "`diagram.md` that is really a PNG",
            "Fix its permissions, or remove or rename it.",
        ),
        Rule(
            "MEM114",
            "skipped-path",
            "warning",
            "directory",
            "A path memdir refuses to follow: a symlink leading outside the memory dir, a "
            "broken symlink, a directory that cannot be listed.",
            "Memory must stay inside the memory dir: a link out could expose or overwrite "
            "unrelated files, and whatever it points to is not a memory here.",
            "`shared.md -> /home/ana/notes/shared.md`",
            "Copy the file into the memory dir, or remove the link.",
        ),
    )
}

ALL_CODES: tuple[str, ...] = tuple(RULES)


def expand_codes(patterns: tuple[str, ...] | list[str]) -> set[str]:
    """The codes a list of codes or prefixes (``MEM1``) names; unknown entries name none."""
    selected: set[str] = set()
    for pattern in patterns:
        selected.update(code for code in ALL_CODES if code.startswith(pattern))
    return selected


def unknown_codes(patterns: tuple[str, ...] | list[str]) -> list[str]:
    """Entries of ``patterns`` that match no code (for a usage error)."""
    return [p for p in patterns if not any(code.startswith(p) for code in ALL_CODES)]


def markdown_table() -> str:
    """The table of ``docs/diagnostics.md`` (and the README)."""
    rows = [
        "| Code | Default | What it means | Why it matters to the agent | Example | Fix |",
        "|------|---------|---------------|-----------------------------|---------|-----|",
    ]
    for rule in RULES.values():
        fix = rule.remedy
        if rule.fixable == "safe":
            fix += " *Safe fix.*"
        elif rule.fixable == "editor":
            fix += " *Editor fix.*"
        cells = (
            f"**{rule.code}** `{rule.name}`",
            rule.severity,
            rule.summary,
            rule.why,
            rule.example,
            fix,
        )
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"
