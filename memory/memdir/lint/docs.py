"""The rule pages of the documentation, rendered from the rule registry.

``docs/rules/MEMxxx.md`` and ``docs/rules/index.md`` are written by ``python -m
memdir.lint.docs`` and a test keeps them equal to what this module renders; ``memdir rule
CODE`` prints the same page, so the installed package carries its own documentation.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from memdir.lint.rules import RULES, Rule

_SCOPES = {
    "index": "MEMORY.md alone (the index, path A)",
    "topic": "one topic file at a time",
    "directory": "the directory as a whole (the index and its topic files together)",
}
_FIXES = {
    "safe": "safe: `memdir lint --fix` applies it, and editors offer it as a quick fix",
    "editor": "in the editor: the language server offers a quick fix for a person to accept",
    "none": "none: the change needs a person",
}
_INDEX_INTRO = """\
# Rules

`memdir lint` (and the language server) report every way a memory becomes invisible, wrong or
unsafe for the agent. Codes are stable: a code never changes meaning. Each message also says why
the finding matters to the agent. MEM0xx codes are about MEMORY.md (the index, path A), MEM1xx
about topic files and the directory as a whole (the prefetch scan, path B, and the agent's own
reads, path C).

Each code has a page, also printed by `memdir rule CODE` (`memdir rule` lists them all).
Severities can be changed per code, and `recall_mode` shifts some of them: see
[Configuration](../configuration.md).

Rules marked *Preview* are off by default: they are not yet right often enough on real memory
directories (each page gives the precision measured; [Rules on real memory
directories](../real-dirs.md) has every rule's figures and how they are measured). Turn them
on with `preview = true`, `memdir lint --preview` or the editor's `preview` setting ([Preview
rules](../configuration.md#preview-rules)).

Rules marked *Auto memory only* model how Claude Code loads its auto memory (the index injected
up to a cap, the prefetch's heads and manifest): they are not run on a directory the agent reads
on the project's instructions, with its tools ([How memdir maps to the
agent](../agent.md#read-by-instructions)), nor on a file kept aside in an archive, drafts or
config folder ([Files kept aside](../agent.md#files-kept-aside)).

<!-- Generated from the rule registry (memdir.lint.rules.RULES) by
`python -m memdir.lint.docs`; tests/core/test_lint_docs.py keeps this page equal to it. -->

"""
_INDEX_OUTRO = """
*Safe fix*: applied by `memdir lint --fix` (it only adds text, or removes an exact duplicate
line). *Editor fix*: offered by the language server as a code action for a person to accept.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _fix_note(rule: Rule) -> str:
    if rule.safe_when:
        return " *Safe fix when sure, else editor fix.*"
    return {"safe": " *Safe fix.*", "editor": " *Editor fix.*"}.get(rule.fixable, "")


def _fix_line(rule: Rule) -> str:
    if rule.safe_when:
        return (
            f"safe when {rule.safe_when}: then `memdir lint --fix` applies it. Otherwise the "
            "language server offers it as a quick fix for a person to accept"
        )
    return _FIXES.get(rule.fixable, rule.fixable)


def _severity(rule: Rule, table: bool = False) -> str:
    """The default severity, and the severity in each recall mode where it differs."""
    modes = [
        f"{severity} in `{mode}` mode" if table else f'{severity} with `recall_mode = "{mode}"`'
        for mode, severity in rule.severity_by_mode.items()
    ]
    if not modes:
        return rule.severity
    return f"{rule.severity} ({'; '.join(modes)})"


def _preview_lines(rule: Rule) -> str:
    if not rule.preview:
        return ""
    return (
        "- **Preview**: off by default; on with `preview = true` in memdir.toml, "
        "`memdir lint --preview` or the editor's `preview` setting "
        "([Preview rules](../configuration.md#preview-rules))\n"
        f"- **Measured precision**: {rule.precision}\n"
    )


def _auto_memory_line(rule: Rule) -> str:
    if not rule.auto_memory_only:
        return ""
    return (
        "- **Auto memory only**: not run on a directory read by the project's instructions "
        "([How the agent reads it](../agent.md#read-by-instructions)) nor on a file kept aside "
        "([archive, drafts and config folders](../agent.md#files-kept-aside)): "
        f"{rule.auto_memory_only}\n"
    )


def rule_page(rule: Rule) -> str:
    """The Markdown page of one rule: ``docs/rules/<code>.md`` and ``memdir rule <code>``."""
    return (
        f"# {rule.code} `{rule.name}`\n"
        "\n"
        f"{_preview_lines(rule)}"
        f"- **Default severity**: {_severity(rule)}\n"
        f"- **Checks**: {_SCOPES.get(rule.scope, rule.scope)}\n"
        f"- **Fix**: {_fix_line(rule)}\n"
        f"{_auto_memory_line(rule)}"
        "\n"
        "## What it means\n"
        "\n"
        f"{rule.summary}\n"
        "\n"
        "## Why it matters to the agent\n"
        "\n"
        f"{rule.why}\n"
        "\n"
        "## Example\n"
        "\n"
        f"{rule.example}\n"
        "\n"
        "## How to fix it\n"
        "\n"
        f"{rule.remedy}\n"
    )


def rules_table(rules: Iterable[Rule] | None = None) -> str:
    """The table of every rule, each code linking to its page."""
    rows = [
        "| Code | Default | What it means | Why it matters to the agent | Fix |",
        "|------|---------|---------------|-----------------------------|-----|",
    ]
    for rule in RULES.values() if rules is None else rules:
        cells = (
            f"[**{rule.code}**]({rule.code}.md) `{rule.name}`",
            ("*Preview*: off; " if rule.preview else "")
            + ("*Auto memory only*; " if rule.auto_memory_only else "")
            + _severity(rule, table=True),
            rule.summary,
            rule.why,
            rule.remedy + _fix_note(rule),
        )
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def index_page() -> str:
    """``docs/rules/index.md``: what the codes are, then the table."""
    return _INDEX_INTRO + rules_table() + _INDEX_OUTRO


def pages() -> dict[str, str]:
    """Every generated file under ``docs/rules/``, by file name."""
    generated = {f"{code}.md": rule_page(rule) for code, rule in RULES.items()}
    generated["index.md"] = index_page()
    return generated


def write(directory: Path) -> list[Path]:
    """Write the rule pages into ``directory`` and delete pages of codes no longer registered."""
    directory.mkdir(parents=True, exist_ok=True)
    generated = pages()
    for stale in directory.glob("MEM*.md"):
        if stale.name not in generated:
            stale.unlink()
    written = []
    for name, text in generated.items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    directory = Path(args[0]) if args else Path("docs/rules")
    for path in write(directory):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
