"""Every code with a fix, planted and asked for its code actions: no two actions do the same.

The fixes come from one planner (:mod:`memdir.fixes.plan`); this checks what a client is
actually offered for each finding, by title and by effect, against the rule registry.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from lsp_helpers import Workspace, codes, open_doc, quick_fixes, topic, wait_until
from lsprotocol import types
from memdir import constants as C
from memdir.lint.rules import RULES
from pytest_lsp import LanguageClient

INDEX = (
    "# Index\n"
    "- [Role](role.md) — who Ana is\n"
    "- [Role](role.md) — who Ana is\n"
    "- [Gone](gone.md) — the release calendar\n"
    "- [Issue](issue.md) — retry limits\n"
    "- [Launch](launch.md) — due March 3\n"
    "\n"
    "Some paragraph written into the index.\n"
)
FILES = {
    # MEM004 and MEM119 are preview rules.
    "memdir.toml": "preview = true\n",
    "MEMORY.md": INDEX,
    "role.md": topic("role", "Ana is a backend engineer who is new to React", "Users"),
    "bare.md": "# Grafana\nThe checkout board is the first stop when p95 alerts fire.\n",
    "orphan.md": topic("orphan", "oncall escalation goes through PagerDuty core-platform"),
    "retention.md": topic("数据保留策略", "行为日志只保留 90 天，新表要配清理任务"),
    "freeze.md": (
        "---\nname: freeze\ndescription: the payments freeze window and who lifts it\n"
        "type: project\nmodified: 2026-12-03T10:00:00.000Z\nlast_verified: 2020-01-02\n---\n"
        "The freeze starts next Friday.\n"
    ),
    "launch.md": topic("launch", "the product launch is due on May 5"),
    "issue.md": (
        "---\nname: issue\ndescription: Issue #31 retry limits agreed with payments\n"
        "type: project\n---\nRetries stop after five attempts.\n"
    ),
}
#: Code -> (the file its planted finding is in, the titles of every action offered for it).
PLANTED: dict[str, tuple[str, set[str]]] = {
    "MEM004": ("MEMORY.md", {"Move to topic file some-paragraph-written-into-the-index.md"}),
    "MEM005": ("MEMORY.md", {"Create gone.md", "Remove the dangling entry for gone.md"}),
    "MEM006": ("MEMORY.md", {"Remove the duplicate entry for role.md (line 3)"}),
    "MEM101": ("bare.md", {f"Add frontmatter as a `{t}` memory" for t in C.MEMORY_TYPES}),
    "MEM104": ("role.md", {f"Change the type to `{t}`" for t in C.MEMORY_TYPES}),
    "MEM107": ("orphan.md", {"Add orphan.md to MEMORY.md"}),
    "MEM115": ("retention.md", {"Use the file name: rename to `retention`"}),
    "MEM119": ("freeze.md", {"Replace “next Friday” with 2026-12-11 (as written on 2026-12-03)"}),
    "MEM124": ("issue.md", {"Quote the description so YAML keeps it whole"}),
    "MEM129": ("MEMORY.md", {"Replace the index hook with the description"}),
    # The server judges against the real date (the one input of a run not frozen here).
    "MEM120": ("freeze.md", {f"Mark verified today ({dt.date.today().isoformat()})"}),
}


#: Codes whose fix is planted in a test of their own (it needs a project's git history).
ELSEWHERE = {
    "MEM117": "test_citation_fix.py",
    "MEM128": "test_merge_fix.py",  # deletes a file: its own workspace
    "MEM127": "test_instructions_fix.py",  # needs the project's CLAUDE.md
}


def test_every_code_with_a_fix_is_planted() -> None:
    fixable = {rule.code for rule in _rules() if rule.fixable != "none"}
    assert fixable == set(PLANTED) | set(ELSEWHERE)


def _rules() -> list[Any]:
    return list(RULES.values()) if isinstance(RULES, dict) else list(RULES)


def _range(r: types.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def effect(action: types.CodeAction) -> frozenset[tuple[object, ...]]:
    """What applying the action does, whatever form the client gets it in."""
    done: set[tuple[object, ...]] = set()
    edit = action.edit
    if edit is not None:
        for uri, edits in (edit.changes or {}).items():
            done |= {("edit", uri, _range(e.range), e.new_text) for e in edits}
        for change in edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                done.add(("create", change.uri))
            elif isinstance(change, types.TextDocumentEdit):
                uri = change.text_document.uri
                for e in change.edits:
                    assert isinstance(e, types.TextEdit)
                    done.add(("edit", uri, _range(e.range), e.new_text))
    if action.command is not None:
        for uri, text in action.command.arguments or []:
            done |= {("create", uri), ("edit", uri, (0, 0, 0, 0), text)}
    return frozenset(done)


@pytest.mark.files(FILES)
async def test_no_finding_offers_two_actions_that_do_the_same(
    client: LanguageClient, workspace: Workspace
) -> None:
    opened: dict[str, str] = {}
    for code, (rel, titles) in PLANTED.items():
        uri = opened.get(rel) or opened.setdefault(rel, open_doc(client, workspace, rel))
        found = await wait_until(client, uri, lambda f, code=code: code in codes(f))
        [diagnostic] = [d for d in found if d.code == code]
        actions = await quick_fixes(client, uri, diagnostic)
        assert {a.title for a in actions} == titles, code
        assert len(actions) == len(titles), (code, [a.title for a in actions])
        effects = [effect(a) for a in actions]
        assert all(effects), code
        assert len(set(effects)) == len(effects), (code, [a.title for a in actions])
        assert all(a.kind == types.CodeActionKind.QuickFix for a in actions), code
        assert sum(bool(a.is_preferred) for a in actions) == 1, code  # what lint attached
