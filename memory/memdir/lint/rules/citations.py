"""Rules about what a memory cites in its project (MEM117, MEM118): paths and identifiers that no
longer exist there.

They run only when the lint context has a :class:`~memdir.project.lookup.Project` (``memdir lint
--project``, or the project of the agent's own memory dir); without one they find nothing and
cost nothing. Extraction is conservative on purpose: a false finding teaches people to ignore the
rule, a miss only leaves a memory unchecked. So only text that is unmistakably a path or an
identifier is checked: fenced code blocks, URLs, placeholders (``path/to/x``), shell commands and
plain words are left alone, and nothing in the frontmatter is read.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from memdir import constants as C
from memdir.fixes import citations as citation_fixes
from memdir.lint.diagnostic import Diagnostic, Fix
from memdir.lint.rules.base import IndexView, Rule, TopicView, offset_span
from memdir.model import Span

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext
    from memdir.project.lookup import Project
from memdir.project.citations import (
    DATED_NAME,
    PATH_EXTENSIONS,
    Citation,
    _extension,
    _path_like,
    extract_citations,
    path_target,
    says_elsewhere,
)

#: MEM118 checks names only when the project holds at least this share of the names the memory
#: dir cites (:meth:`~memdir.project.lookup.Project.found_share`): below it, the memories are
#: about code kept elsewhere, and a name missing here says nothing.
MIN_FOUND_SHARE = 0.9

# --- checking ------------------------------------------------------------------------------------


def _body_offset(text: str, body_line: int) -> int:
    offset = 0
    for _ in range(body_line):
        newline = text.find("\n", offset)
        if newline < 0:
            return len(text)
        offset = newline + 1
    return offset


def _in_memory_dir(memory_root: Path, base: Path, path: str) -> bool:
    """A path that names a file of the memory dir (relative to it or to the citing file)."""
    for directory in {memory_root, base}:
        if os.path.lexists(os.path.join(directory, path.rstrip("/"))):
            return True
    return False


def _inside(project: Project, citation: Citation) -> bool:
    """Whether a path that git never saw go is plainly meant inside this project: it starts at
    one of the project's top-level entries and is a file name with a known extension, a
    directory written with a trailing ``/``, or a link (not to a ``.md`` file, which is more
    likely a memory link). Anything else may live in another repository or on a server."""
    path = citation.target
    first = path.split("/", 1)[0]
    if "/" not in path.rstrip("/") or not project.exists(first):
        return False
    if citation.link:
        return _extension(path) != "md"
    return path.endswith("/") or _extension(path) in PATH_EXTENSIONS or "." not in path


class Missing(NamedTuple):
    """What the project says of a cited path."""

    missing: bool
    #: Where git shows it went (a project path), when it did.
    renamed: str | None = None
    #: Whether git shows it was deleted (and not renamed).
    deleted: bool = False
    #: Whether it was found by its tail (``lint/state.py`` of ``memory/memdir/lint/state.py``).
    tail: bool = False
    #: The project file of the same name with another extension (``App.tsx`` for a cited
    #: ``App.jsx``), when there is exactly one.
    variant: str | None = None


def missing_path(project: Project, path: str) -> Missing:
    """Whether a cited path is missing, and where git shows it went or that it was deleted. A
    file or directory of the project, or the tail of one (``lint/state.py`` for
    ``memory/memdir/lint/state.py``), is not missing, nor is a path that exists on disk though
    git ignores it."""
    bare = path.rstrip("/")
    if project.exists(bare) or project.in_memory_dir(bare) or project.has_suffix(bare):
        return Missing(False)
    if project.on_disk(bare) or project.ignored(path):
        return Missing(False)  # a build output, a cache, runtime data: made where it runs
    completions = project.completions(bare)
    name = bare.rsplit("/", 1)[-1]
    if any(c.rsplit("/", 1)[-1].startswith(name) for c in completions):
        return Missing(False)  # shorthand: db/054 for db/054_seed_users.sql
    renamed = project.renamed_to(bare)
    if renamed is None and "/" in bare:
        # A renamed parent: old/dir/file.py where old/dir moved as a whole.
        parent, _, rest = bare.rpartition("/")
        moved = project.renamed_to(parent)
        if moved is not None and project.exists(f"{moved}/{rest}"):
            renamed = f"{moved}/{rest}"
    if renamed is not None:
        return Missing(True, renamed)
    renamed = project.renamed_suffix(bare)
    if renamed is not None:
        return Missing(True, renamed, tail=True)
    variant = completions[0] if len(completions) == 1 else None
    return Missing(True, deleted=project.was_deleted(bare), variant=variant)


def _own_program(project: Project, program: str) -> bool:
    """Whether a program a command runs is the project's: a file of it (``./scripts/deploy.sh``)
    or, for a bare name (``memdir``), a word in it."""
    if _path_like(program):
        path = path_target(program)
        return path is not None and not missing_path(project, path).missing
    return project.has_word(program)


def _unique_tail(project: Project, tail: str) -> bool:
    """Whether ``tail`` is the end of exactly one project file or directory."""
    end = "/" + tail
    found = 0
    for path in itertools.chain(project.files, project.dirs):
        if path == tail or path.endswith(end):
            found += 1
            if found > 1:
                return False
    return found == 1


def _rename_fix(
    project: Project, citation: Citation, found: Missing, path: Path, rel: str, span: Span
) -> Fix | None:
    assert found.renamed is not None
    new_text = citation_fixes.renamed_text(
        citation.text,
        found.renamed,
        citation.form,
        tail=found.tail,
        unique_tail=functools.partial(_unique_tail, project),
    )
    if new_text is None:
        return None
    return citation_fixes.replace_renamed_path(path, rel, span, citation.text, new_text)


def _check_text(
    text: str,
    start: int,
    base: Path,
    ctx: LintContext,
    path: Path,
    rel: str,
    names: bool = True,
) -> Iterator[Diagnostic]:
    project = ctx.project
    if project is None:
        return
    if not project.complete:
        return  # a partial file list: anything may be in the part not listed
    if DATED_NAME.search(path.name) is not None:
        return  # a log of that day: what it cites is history
    paths_on = "MEM117" in ctx.enabled
    # A memory dir citing names its project mostly lacks is about code kept elsewhere (too few
    # names to tell: checked).
    share = project.found_share()
    names_on = names and "MEM118" in ctx.enabled and (share is None or share >= MIN_FOUND_SHARE)
    for citation in extract_citations(text, start):
        if says_elsewhere(text, citation.start, citation.end):
            continue  # history, a plan, another repository or branch
        span = offset_span(text, citation.start, citation.end)
        if citation.kind == "path":
            if not paths_on or _in_memory_dir(ctx.root, base, citation.target):
                continue
            found = missing_path(project, citation.target)
            if not found.missing or not (
                found.renamed or found.deleted or _inside(project, citation)
            ):
                continue
            fix = None
            if found.renamed is not None:
                message = (
                    f"`{citation.text}` no longer exists in the project; git shows it was "
                    f"renamed to `{found.renamed}`: update the memory, or the agent will look "
                    "for the old path"
                )
                fix = _rename_fix(project, citation, found, path, rel, span)
            elif found.variant is not None:
                message = (
                    f"`{citation.text}` does not exist in the project; did you mean "
                    f"`{found.variant}`? The agent trusts a memory's paths, so it would look "
                    "for the one cited: update the path"
                )
            elif found.deleted:
                message = (
                    f"`{citation.text}` no longer exists in the project; git shows it was "
                    "deleted: the agent trusts a memory's paths, so it would look for it or "
                    "recommend it; update the memory or remove the claim"
                )
            else:
                message = (
                    f"`{citation.text}` does not exist in the project: the agent trusts a "
                    "memory's paths, so it would look for it or recommend it; update the path "
                    "or remove the claim"
                )
            yield ctx.diag("MEM117", path, rel, span, message, fix)
        elif (
            names_on
            and (citation.qualifier is None or project.has_word(citation.qualifier))
            and all(_own_program(project, program) for program in citation.programs)
            and not project.has_word(citation.target)
        ):
            yield ctx.diag(
                "MEM118",
                path,
                rel,
                span,
                f"`{citation.text}` appears nowhere in the project any more: the agent would "
                "recommend something that was removed or renamed; find what replaced it and "
                "update the memory, or remove the claim",
            )


#: The last file's findings: MEM117's and MEM118's checks run one after the other on the same
#: file, and each would otherwise extract and look up its citations again.
_LAST: list[tuple[TopicView, LintContext, list[Diagnostic]]] = []


def _topic_citations(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    if ctx.project is None or not view.usable:
        return []
    last = _LAST[0] if _LAST else None  # one read: another thread may replace it
    if last is not None and last[0] is view and last[1] is ctx:
        return last[2]
    found = _topic_findings(view, ctx)
    _LAST[:] = [(view, ctx, found)]
    return found


def _topic_findings(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    start = _body_offset(topic.text, topic.body_line) if topic.frontmatter is not None else 0
    # A reference memory points at other systems (dashboards, trackers): its names live there.
    names = topic.type != "reference"
    return list(
        _check_text(topic.text, start, topic.path.parent, ctx, topic.path, topic.rel_path, names)
    )


def _index_citations(view: IndexView, ctx: LintContext) -> list[Diagnostic]:
    if ctx.project is None:
        return []
    return list(_check_text(view.index.text, 0, ctx.root, ctx, ctx.index_path, C.INDEX_FILENAME))


def _paths_rule(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    return [d for d in _topic_citations(view, ctx) if d.code == "MEM117"]


def _names_rule(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    return [d for d in _topic_citations(view, ctx) if d.code == "MEM118"]


_NEEDS_PROJECT = (
    " Checked only when the project is known: `memdir lint --project ROOT`, or the project of "
    "the agent's own memory dir (`memdir lint` with no directory)."
)

MEM117 = Rule(
    code="MEM117",
    name="cited-path-missing",
    severity="warning",
    scope="topic",
    summary="A memory cites a path (in backticks, as a Markdown link, or a bare `src/…`-like path) "
    "that does not exist in the project, and either git shows it was renamed (the message says "
    "to what: committed or staged renames, a moved directory) or deleted, or it starts at one "
    "of the project's top-level directories. A path under a top-level name the project does "
    "not have (`other-repo/ci.yml`) may live elsewhere and is not reported. Paths are looked "
    "up in git's file list (tracked and untracked, `.gitignore` respected; an ignored file on "
    "disk counts) or, outside git, a bounded walk; a path may also be the tail of a project "
    "path (`lint/state.py`) or shorthand for one (`db/054` for `db/054_seed.sql`). A path the "
    "project's ignore rules leave out (a build output, a cache, runtime data: `web/dist`) is "
    "not missing: git answers in a repository, the `.gitignore` files are read elsewhere. A "
    "file of the same name with another extension is suggested (`did you mean App.tsx?`). "
    "URLs, absolute and home paths, `../`, globs, placeholders and templates (`path/to/x`, "
    "`logs/YYYY-MM-DD.md`, `NombreView.jsx`), fenced code blocks, the memory dir's own files, "
    "sentences telling history, a plan or another place (deleted, renamed, deprecated, "
    "planned, will, branch, repository, `→`; a few words of other languages too) and files "
    "named by a date (a log of that day) are not checked." + _NEEDS_PROJECT,
    why="The agent trusts what a memory says: a stale path sends it looking for a file that is "
    "gone, or recommending it to the user.",
    example="`See src/app/old.py for the retry logic` after `git mv src/app/old.py src/app/new.py`",
    remedy="Update the path, or remove the claim. When git shows the path was renamed, the editor "
    "offers to replace it with the new one, written in the form the old one was cited (in "
    "its backticks or link, with its `./`, `:12` or `#L10` and a directory's trailing `/`; a "
    "path cited by its tail, such as `lint/state.py`, by the same tail of the new path when "
    "that names one project path). `memdir lint --fix` does not apply it: git's rename "
    "detection is a similarity guess, so a person checks the new path is the same thing.",
    fixable="editor",
    preview=True,
    precision="9 of 13 judged findings right (69%) on the 53 real memory dirs of the dev sample "
    "(2026-12; other agents' dirs get a notice and no finding): the wrong ones left are paths "
    "of another repository named only by its name, a past story told without a past-tense "
    "word, and a `.jsx` cited for a `.tsx` (now a did-you-mean); before the exclusions for "
    "ignored, shorthand, template and historical paths, 9 of 28 (32%)",
    topic=_paths_rule,
    index=lambda view, ctx: [d for d in _index_citations(view, ctx) if d.code == "MEM117"],
)

MEM118 = Rule(
    code="MEM118",
    name="cited-identifier-missing",
    severity="warning",
    scope="topic",
    summary="A memory cites, in backticks, an identifier that appears nowhere in the project: a "
    "function (`charge_card()`), a `snake_case`, `camelCase` or `PascalCase` name, a flag "
    "(`--dry-run`), a dotted name (`stripe.Charge`: its last part is looked up, when its first "
    "part is in the project), a make "
    "target or script (`make deploy`, `npm run lint`). Plain words, values (`true`), version "
    "numbers, other shell commands and the names in `reference` memories (which point at other "
    "systems) are not checked; files under the memory dir do not count as the project. Flags "
    "belong to the program they are passed to: a command's own words (`git commit "
    "--no-verify`, `docker run --rm`) are never checked, and a lone flag (`--no-verify`) is "
    "not checked when its sentence names another tool (git, npm, pytest, docker..., in a "
    "command, in backticks or in the prose) or a command whose program is not the project's "
    "own (a project file such as `./scripts/deploy.sh`, or a name that is a project word). "
    "Names are checked only when the memory dir is about this project's code: when at least "
    f"{MIN_FOUND_SHARE:.0%} of the names it cites are in the project (a dir citing mostly "
    "absent names, such as a dotfiles repository keeping the memory of other work, is about "
    "code kept elsewhere). Claude Code's own tools (`AskUserQuestion`), template names "
    "(`CreateSomethingHandler`), ids of other systems (`act_3134027234`), sentences telling "
    "history, a plan or another place, and "
    "files named by a date are not checked either." + _NEEDS_PROJECT,
    why="The agent would recommend a function, flag or key that was removed or renamed, and the "
    "user would find out only when it fails.",
    example="`Call retry_payment() before refunding` after `retry_payment` was deleted",
    remedy="Find what replaced it and update the memory, or remove the claim.",
    preview=True,
    precision="26 of 53 judged findings right (49%) on the 53 real memory dirs of the dev sample "
    "(2026-12), after leaving out memory dirs about code kept elsewhere (about 300 findings "
    "there): the wrong ones left are names of external libraries and frameworks (ASP.NET's "
    "`MapPost`, MassTransit's), examples and naming patterns, metric-name fragments, and plans "
    "or history told in words of other languages; 9 of 37 (24%) on the first sample of 47",
    topic=_names_rule,
    index=lambda view, ctx: [d for d in _index_citations(view, ctx) if d.code == "MEM118"],
)

RULES = (MEM117, MEM118)
