"""``memdir lint --fix`` finishes what it starts (issue 28): a frontmatter skeleton gets a type
only when the file states one and a description only from the file's opening prose, a
misspelled type is corrected, and a ``--fix`` run never leaves a finding of its own making."""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memdir import constants as C
from memdir.agent.topic import parse_topic_text
from memdir.fixes.plan import frontmatter_skeleton
from memdir.fixes.text import lead_sentence, stated_type, type_from_path, type_spelling
from memdir.lint import DirState, apply_fixes
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.fix import quick_fixes
from memdir.lint.rules.descriptions import description_problem

MakeDir = Callable[..., Path]
REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "fix"
ROOT = Path("/mem")


def lint(root: Path) -> list[Diagnostic]:
    state = DirState(root)
    state.refresh()
    return list(state.lint().diagnostics)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def made_by_fix(root: Path) -> list[str]:
    """``lint --fix`` then ``lint`` on ``root``: the findings of the second run whose code the
    file did not have before the fix touched it (``path code message``)."""
    before: defaultdict[str, set[str]] = defaultdict(set)
    diagnostics = lint(root)
    for d in diagnostics:
        before[d.rel_path].add(d.code)
    old = snapshot(root)
    apply_fixes(diagnostics)
    new = snapshot(root)
    touched = {rel for rel in new if old.get(rel) != new[rel]}
    return [
        f"{d.rel_path} {d.code} {d.message}"
        for d in lint(root)
        if d.rel_path in touched and d.code not in before[d.rel_path]
    ]


def fixture_dirs() -> list[Path]:
    return [
        *sorted(p for p in FIXTURES.iterdir() if p.is_dir()),
        REPO / "examples" / "memory",
        REPO / "client-vscode" / "e2e" / "fixtures" / "memory",
    ]


@pytest.mark.parametrize("source", fixture_dirs(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_fix_leaves_no_finding_of_its_own_making(source: Path, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    shutil.copytree(source, root)
    assert made_by_fix(root) == []


def test_the_fixture_families_are_finished_or_left_alone(tmp_path: Path) -> None:
    stated = tmp_path / "stated"
    shutil.copytree(FIXTURES / "stated-types", stated)
    apply_fixes(lint(stated))
    assert [d.code for d in lint(stated)] == []
    types = {}
    for path in stated.rglob("*.md"):
        if path.name != C.INDEX_FILENAME:
            topic = parse_topic_text(path.read_text(encoding="utf-8"), path, path.name)
            types[path.relative_to(stated).as_posix()] = (topic.type, topic.description)
    assert types == {
        "feedback_review-style.md": (
            "feedback",
            "Review comments should name the failing test and suggest one concrete change",
        ),
        "reference/status-board.md": (
            "reference",
            "The team status board lists every open incident with its owner and pager rotation",
        ),
        "billing-cutover.md": (
            "project",
            "Invoices move to the new ledger service in the second week of the quarter",
        ),
        "ana.md": (
            "user",
            "Ana maintains the ingestion workers and prefers answers with shell commands",
        ),
    }

    unstated = tmp_path / "unstated"
    shutil.copytree(FIXTURES / "unstated", unstated)
    before = snapshot(unstated)
    apply_fixes(lint(unstated))
    after = snapshot(unstated)
    # Only the index grew (orphans added); no topic file was given a half-made frontmatter.
    assert {rel for rel in after if after[rel] != before.get(rel)} == {C.INDEX_FILENAME}
    assert sorted(d.rel_path for d in lint(unstated) if d.code == "MEM101") == sorted(
        rel for rel in before if rel != C.INDEX_FILENAME
    )

    misspelled = tmp_path / "misspelled"
    shutil.copytree(FIXTURES / "misspelled-types", misspelled)
    apply_fixes(lint(misspelled))
    left = [(d.rel_path, d.code) for d in lint(misspelled)]
    assert left == [("schema-choice.md", "MEM104")]  # a synonym is a guess: the editor's
    assert "type: feedback\n" in (misspelled / "terse-answers.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("rel", "text", "expected"),
    [
        ("feedback_tests.md", "x\n", "feedback"),
        ("user-role.md", "x\n", "user"),
        ("Reference/grafana.md", "x\n", "reference"),
        ("cutover.md", "# Project: billing cutover\n", "project"),
        ("ana.md", "- **Type:** `user`\n", "user"),
        # Words that only begin like a type, headings that merely mention one, content: nothing.
        ("users-api.md", "x\n", ""),
        ("projection.md", "x\n", ""),
        ("superuser/notes.md", "x\n", ""),
        ("notes.md", "# Project notes\n", ""),
        ("notes.md", "Always run the linter before pushing.\n", ""),
        ("notes.md", "Type: projectile motion\n", ""),
    ],
)
def test_a_skeleton_type_is_the_one_the_file_states(rel: str, text: str, expected: str) -> None:
    assert stated_type(rel, text) == expected


def test_type_from_path_needs_a_whole_word() -> None:
    assert type_from_path("users-api.md") == ""
    assert type_from_path("user_role.md") == "user"
    assert type_from_path("a/user/role.md") == "user"


@pytest.mark.parametrize(
    "text",
    [
        "# Deploy log\n- 2026-03-01: deploys moved to Tuesday mornings\n",
        "2026-03-01: deploys moved to Tuesday mornings after the outage.\n",
        "**2026-03-01** deploys moved to Tuesday mornings after the outage.\n",
        "# Deploys moved to Tuesday mornings after the outage\n",
        "See [the deploy runbook](https://runbooks.example.com/deploys) for this.\n",
        "[Deploy runbook](https://runbooks.example.com/deploys)\n",
        "Updated: 2026-03-01\nStatus: draft\n",
        "Last updated: March 1, the deploy checklist was revised.\n",
        "Auto-generated from the deploy pipeline, do not edit by hand.\n",
        "> Deploys moved to Tuesday mornings after the outage.\n",
        "`GET /v2/deploys` -> `{id, state}` from `api.example.com`\n",
        # Prose under a later section describes that section, not the memory.
        "# Deploys\n\n## Step 1\nOpen the pipeline page and pick the release branch.\n",
    ],
)
def test_a_description_never_comes_from_a_log_a_heading_a_link_or_boilerplate(
    text: str,
) -> None:
    assert lead_sentence(text) == ""
    topic = parse_topic_text(text, ROOT / "feedback_deploys.md", "feedback_deploys.md")
    assert not frontmatter_skeleton(topic, vague=description_problem).safe


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# Deploys\n\nWe deploy on Tuesdays after the canary bake. Never on Fridays.\n",
            "We deploy on Tuesdays after the canary bake",
        ),
        (
            "Updated: 2026-03-01\n\nThe canary bake lasts thirty minutes before the rollout.\n",
            "The canary bake lasts thirty minutes before the rollout",
        ),
        (
            "# Deploys\n```sh\nmake deploy\n```\nThe deploy target runs the canary bake first.\n",
            "The deploy target runs the canary bake first",
        ),
        (
            "# 发布\n\n发布前先跑金丝雀，观察三十分钟再全量。\n",
            "发布前先跑金丝雀，观察三十分钟再全量",
        ),
    ],
)
def test_a_description_is_the_first_sentence_of_the_lead(text: str, expected: str) -> None:
    assert lead_sentence(text) == expected


def test_a_skeleton_that_would_leave_a_finding_is_the_editors() -> None:
    def safe(rel: str, text: str) -> bool:
        topic = parse_topic_text(text, ROOT / rel, rel)
        return frontmatter_skeleton(topic, vague=description_problem).safe

    lead = "The canary bake lasts thirty minutes before the rollout.\n"
    assert safe("project_canary.md", lead)
    assert not safe("canary.md", lead)  # no stated type: MEM103 would follow
    assert not safe("project_canary.md", "Canary bake rules.\n")  # MEM109 would follow
    assert not safe("project/金丝雀.md", lead)  # a name the agent empties: MEM115 would follow


def test_the_editor_offers_a_skeleton_of_every_type(make_dir: MakeDir) -> None:
    text = "# Canary\n\nThe canary bake lasts thirty minutes before the rollout.\n"
    root = make_dir({"canary.md": text})
    [diagnostic] = [d for d in lint(root) if d.code == "MEM101"]
    assert diagnostic.fix is not None and not diagnostic.fix.safe
    topic = parse_topic_text(text, root / "canary.md", "canary.md")
    fixes = quick_fixes(diagnostic, topic=topic)
    assert [f.title for f in fixes] == [
        "Add frontmatter as a `project` memory",  # the guess, attached by lint
        "Add frontmatter as a `user` memory",
        "Add frontmatter as a `feedback` memory",
        "Add frontmatter as a `reference` memory",
    ]
    assert fixes[0] is diagnostic.fix
    assert not any(f.safe for f in fixes)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Project", "project"),
        ("FEEDBACK", "feedback"),
        ("feedbacks", "feedback"),
        ("Users", "user"),
        ("refrence", "reference"),
        ("porject", "project"),
        ("use", None),  # too short to call a typo
        ("decision", None),  # a synonym: a guess
        ("fact", None),
        ("notes", None),
    ],
)
def test_only_a_misspelled_type_is_corrected_unattended(raw: str, expected: str | None) -> None:
    assert type_spelling(raw) == expected


def test_orphans_fill_the_index_only_up_to_its_near_cap(make_dir: MakeDir) -> None:
    filler = C.INDEX_REWRITE_TARGET_LINES - 2
    index = "".join(f"- [Note {i}](n{i}.md) — the note number {i}\n" for i in range(filler))
    files: dict[str, str] = {"MEMORY.md": index}
    for i in range(filler):
        files[f"n{i}.md"] = (
            f"---\nname: n{i}\ndescription: the note number {i} about the deploy window\n"
            "type: project\n---\n"
        )
    for name in ("a", "b", "c", "d"):
        files[f"orphan-{name}.md"] = (
            f"---\nname: orphan-{name}\ndescription: orphan {name} holds the rollback steps\n"
            "type: project\n---\n"
        )
    root = make_dir(files)
    orphans = [d for d in lint(root) if d.code == "MEM107"]
    assert [d.fix is not None and d.fix.safe for d in orphans] == [True, True, False, False]
    assert made_by_fix(root) == []
    assert [d.rel_path for d in lint(root) if d.code == "MEM107"] == [
        "orphan-c.md",
        "orphan-d.md",
    ]


# --- the property, on generated directories ----------------------------------------------------

_NAMES = st.sampled_from(
    ["notes", "feedback_style", "user-role", "project_cutover", "reference/boards", "users-api"]
)
_LINES = st.sampled_from(
    [
        "# Deploys",
        "# Feedback: keep answers short",
        "## Details",
        "- 2026-03-01: the canary bake went to thirty minutes",
        "- a plain bullet about rollbacks",
        "The canary bake lasts thirty minutes before each rollout.",
        "Rollbacks page the release captain and the owning team.",
        "See [the runbook](https://runbooks.example.com/x).",
        "Updated: 2026-03-01",
        "Type: reference",
        "Short one.",
        "```",
        "> a quoted line about the search ranking",
        "",
    ]
)
_TYPES = st.sampled_from(["project", "Project", "feedbacks", "decision", "refrence", ""])


@st.composite
def _directories(draw: st.DrawFn) -> dict[str, str]:
    files: dict[str, str] = {}
    for number in range(draw(st.integers(1, 4))):
        rel = f"{draw(_NAMES)}-{number}.md"
        body = "\n".join(draw(st.lists(_LINES, max_size=6))) + "\n"
        if draw(st.booleans()):
            type_ = draw(_TYPES)
            body = (
                f"---\nname: m{number}\ndescription: memory {number} on rollout step "
                f"{number * 7} and its owner\ntype: {type_}\n---\n" + body
            )
        files[rel] = body
    if draw(st.booleans()):
        files["MEMORY.md"] = "".join(f"- [{rel}]({rel}) — a hook\n" for rel in list(files)[:2])
    return files


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_directories())
def test_fix_never_leaves_a_finding_of_its_own_making(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, str]
) -> None:
    from memhelpers import write_files

    root = tmp_path_factory.mktemp("memory")
    write_files(root, files)
    assert made_by_fix(root) == []


def test_two_skeletons_drafting_one_description_are_left_to_the_editor(tmp_path: Path) -> None:
    """Found by the property test above: two files opening with the same sentence would get
    the same drafted description, a near-duplicate (MEM111) of the fix's own making."""
    from memhelpers import write_files

    same = "The canary bake lasts thirty minutes before each rollout.\n"
    write_files(tmp_path, {"feedback_style-0.md": same, "feedback_style-1.md": same})
    assert made_by_fix(tmp_path) == []
    # Neither skeleton was applied unattended (the orphans' index entries were).
    assert all((tmp_path / f"feedback_style-{i}.md").read_text() == same for i in (0, 1))
