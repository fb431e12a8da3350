"""What a memory cites of its project: the paths and identifiers in its code spans, links and
commands (:func:`extract_citations`), and every word a memory dir cites (:func:`cited_words`),
which :class:`~memdir.project.lookup.Project` looks up in one pass. The citation rules
(:mod:`memdir.lint.rules.citations`, MEM117 and MEM118) check them against the project."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from memdir import constants as C
from memdir.agent.index import Fences
from memdir.fixes.citations import LOCATION, Form

#: Extensions that make a name without a slash a file name (source code: config and document
#: names such as ``settings.json`` or ``CLAUDE.md`` often live outside the project).
SOURCE_EXTENSIONS = frozenset(
    {"py", "pyi", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "rs", "java", "kt", "kts", "rb",
     "php", "c", "h", "cc", "cpp", "hpp", "cs", "swift", "scala", "vue", "svelte", "sh", "bash",
     "zsh", "sql", "proto", "ex", "exs", "erl", "hs", "ml", "clj", "dart", "lua", "r", "jl"}
)  # fmt: skip
#: Extensions that make a slash-separated name a file path.
PATH_EXTENSIONS = SOURCE_EXTENSIONS | frozenset(
    {"json", "yaml", "yml", "toml", "ini", "cfg", "conf", "md", "rst", "txt", "html", "htm",
     "css", "scss", "sass", "less", "xml", "csv", "lock", "gradle", "tf", "tfvars", "properties",
     "env", "example", "tmpl", "j2", "graphql", "mk", "cmake", "dockerfile"}
)  # fmt: skip
#: Path components that mark an example rather than a real path.
PLACEHOLDERS = frozenset(
    {"foo", "bar", "baz", "qux", "xxx", "yyy", "zzz", "example", "your", "yours", "my", "some",
     "somewhere", "placeholder", "name", "file", "dir", "folder"}
)  # fmt: skip
#: Words that make a path component or a name an example to fill in (``logs/YYYY-MM-DD.md``,
#: ``src/views/NombreView.jsx``, ``CreateSomethingHandler``), in the languages seen.
TEMPLATE_WORDS = frozenset(
    {"yyyy", "yy", "mm", "dd", "hh", "xxx", "xxxx", "nnn", "nombre", "nome", "nom", "something",
     "foo", "bar", "baz", "placeholder", "example"}
)  # fmt: skip
_TEMPLATE_PART = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]+")
#: Words that tell a sentence is history, a plan, or about another place: a path or a name it
#: cites need not exist in the project now (``the old x.py``, ``scripts/y.sh was
#: deleted``, ``the fix will add retry_all()``, ``see docs/z.md on the release branch``).
#: ``→`` marks a rename story. English, and the few other languages seen in memories.
CONTEXT_WORDS = re.compile(
    r"(?<![A-Za-z])(?:(?:delet|remov|retir|deprecat|histor|obsolete|supersed|replac|renam"
    r"|propos|plann)[a-z]*|dropped|legacy|moved|formerly|previously|no longer|used to"
    r"|dead|was|were|did|didn't|had|old|older|ex-|branch(?:es)?|repo|repos|repository|fork"
    r"|upstream|another project|other project|plan|plans|will|todo|future|later|would)"
    r"(?![A-Za-z])"
    r"|→|->|=>|⇒|旧|舊|已删|已刪|删除|刪除|移除|废弃|廢棄|弃用|棄用|改名|重命名|计划|計劃|将来|將來"
    r"|削除|廃止|予定|삭제|제거|예정|удал|устар|переимен|был|план|екс-|видал|перейм",
    re.IGNORECASE,
)
#: A file named by a date (``2026-03-14.md``, ``session-2026-03-14.md``) is a log of that day:
#: what it cites is history.
DATED_NAME = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
#: Claude Code's own tools, which memories about working with the agent name in backticks:
#: never the project's.
AGENT_TOOLS = frozenset(
    {"AskUserQuestion", "SendMessage", "EnterWorktree", "ExitWorktree", "ExitPlanMode",
     "EnterPlanMode", "TodoWrite", "TodoRead", "WebFetch", "WebSearch", "NotebookEdit",
     "NotebookRead", "MultiEdit", "BashOutput", "KillShell", "SlashCommand", "TaskCreate",
     "TaskUpdate", "TaskList", "TaskOutput", "TaskStop", "ToolSearch", "ListMcpResourcesTool",
     "ReadMcpResourceTool"}
)  # fmt: skip
#: Backticked values that are values, not identifiers.
VALUES = frozenset(
    {"true", "false", "null", "none", "nil", "yes", "no", "on", "off", "undefined", "nan", "inf"}
)

_CODE_SPAN = re.compile(r"(`+)([^`\n]+?)\1(?!`)")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_BARE_PATH = re.compile(
    r"(?<![A-Za-z0-9_./:@~\\$%-])"
    r"((?:\./)?[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)+/?)"
    r"(?![A-Za-z0-9_/\\-])"
)
_PATH_TEXT = re.compile(r"[A-Za-z0-9_.@+-][A-Za-z0-9_.@+/-]*")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.:-][A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
#: A name ending in a long number is an id of some other system (an ad account, a ticket).
_NUMBERED_ID = re.compile(r"[_-]\d{6,}$")
_RUNNERS = (("make",), ("npm", "run"), ("pnpm", "run"), ("yarn", "run"), ("just",))
#: Programs that are never the project's own: a flag in a sentence naming one is theirs
#: (`git commit` with `--no-verify`), not the project's.
OTHER_PROGRAMS = frozenset(
    {"git", "gh", "hub", "npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "deno", "node",
     "pip", "pip3", "pipx", "uv", "uvx", "poetry", "pdm", "conda", "python", "python3", "pytest",
     "tox", "nox", "ruff", "mypy", "black", "flake8", "pylint", "isort", "pre-commit", "docker",
     "docker-compose", "podman", "kubectl", "helm", "terraform", "ansible", "cargo", "rustc",
     "rustup", "go", "gcc", "clang", "cmake", "gradle", "mvn", "java", "javac", "dotnet", "ruby",
     "gem", "bundle", "rake", "php", "composer", "tsc", "eslint", "prettier", "jest", "vitest",
     "mocha", "playwright", "webpack", "vite", "curl", "wget", "ssh", "scp", "rsync", "tar",
     "grep", "rg", "find", "sed", "awk", "ls", "cp", "mv", "rm", "cat", "jq", "psql", "mysql",
     "sqlite3", "redis-cli", "aws", "gcloud", "az", "brew", "apt", "apt-get", "systemctl", "sudo",
     "claude", "code", "bash", "sh", "zsh", "chmod", "openssl", "ffmpeg"}
)  # fmt: skip
#: Of those, the ones that name the program in prose too ("commit with git, `--no-verify`"):
#: not the ones that are also plain words (go, find, code).
_PROGRAM_WORDS = re.compile(
    r"(?<![A-Za-z0-9_./-])(?:git|gh|npm|npx|pnpm|yarn|node|pip|pip3|pipx|uv|poetry|python3?"
    r"|pytest|tox|ruff|mypy|flake8|pylint|pre-commit|docker|docker-compose|podman|kubectl|helm"
    r"|terraform|cargo|rustc|gcc|clang|cmake|gradle|mvn|java|dotnet|tsc|eslint|prettier|jest"
    r"|vitest|webpack|vite|curl|wget|ssh|rsync|grep|rg|psql|mysql|aws|gcloud|brew|apt-get"
    r"|claude|bash|zsh|openssl|ffmpeg)(?![A-Za-z0-9_/-])",
    re.IGNORECASE,
)
#: Where a sentence ends, in English and CJK prose.
_SENTENCE_END = re.compile(r"[.!?][\"'*_)\]]*(?=\s|$)|[。！？；;]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

Kind = Literal["path", "identifier"]


@dataclass(frozen=True, slots=True)
class Citation:
    """One thing a memory cites: where (offsets in the text), as written, and what to look up."""

    kind: Kind
    start: int
    end: int
    #: As written in the memory.
    text: str
    #: For a path: the normalised ``/``-separated path (a trailing ``/`` for a directory); for an
    #: identifier: the word to look up.
    target: str
    #: How a path is cited: in a code span, as a Markdown link's target, or bare in the prose.
    form: Form = "code"
    #: For a dotted identifier (``stripe.Charge``): its first part, which must be a project word
    #: for the name to be checked (else it likely names another system: a table, a dashboard).
    qualifier: str | None = None
    #: For a flag: the programs its sentence names in commands (``./scripts/deploy.sh``,
    #: ``memdir``); the flag is checked only when each is the project's own.
    programs: tuple[str, ...] = ()

    @property
    def link(self) -> bool:
        """A path given as a Markdown link: an explicit reference, checked without other
        evidence."""
        return self.form == "link"


# --- extraction ----------------------------------------------------------------------------------


def _extension(path: str) -> str:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot + 1 :].lower() if dot > 0 else ""


def path_target(text: str) -> str | None:
    """The path ``text`` names (``./`` and a ``:line`` suffix dropped), or None for anything
    that is not plainly a path inside a project: URLs, absolute and home paths, ``../``, globs,
    templates, placeholders."""
    if "://" in text or text.startswith(("/", "~", "../", "-", "@")) or text == "./":
        return None
    path = LOCATION.sub("", text)
    if path.startswith("./"):
        path = path[2:]
    if not path or _PATH_TEXT.fullmatch(path) is None:
        return None
    parts = path.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    lowered = [part.lower() for part in parts]
    stems = [part.split(".", 1)[0] for part in lowered]
    if any(part in PLACEHOLDERS or part.startswith(("your-", "your_", "my-")) for part in stems):
        return None
    if "path/to" in "/".join(lowered):
        return None
    if any(_template(part) for part in parts):
        return None
    if "/" not in path:
        return path if _extension(path) in SOURCE_EXTENSIONS else None
    if "." in parts[0] and len(parts) > 1 and _extension(parts[0]) not in PATH_EXTENSIONS:
        return None  # github.com/owner/repo, example.org/x: a host, not a directory
    if any(_extension(part) in SOURCE_EXTENSIONS | {"md"} for part in parts[:-1]):
        return None  # README.md/README_ko.md, a.py/b.py: alternatives, not a path
    return path


def _template(word: str) -> bool:
    """Whether a path component or name is an example to fill in: one of its words (split at
    case changes, digits and punctuation) is a :data:`TEMPLATE_WORDS` word (``YYYY-MM-DD``,
    ``NombreView``, ``CreateSomethingHandler``)."""
    return any(w.lower() in TEMPLATE_WORDS for w in _TEMPLATE_PART.findall(word))


def says_elsewhere(text: str, start: int, end: int) -> bool:
    """Whether the sentence around ``text[start:end]`` tells history, a plan or another place
    (:data:`CONTEXT_WORDS`): then what it cites need not exist in the project now."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    at, until = start - line_start, end - line_start
    # The words of the prose only: the citation (``src/old/x.py``), code spans and links are
    # what is cited, not what is said of it.
    plain = _blank(line, at, until)
    for pattern in (_CODE_SPAN, _LINK):
        plain = pattern.sub(lambda m: " " * len(m.group()), plain)
    for match in _BARE_PATH.finditer(plain):
        raw = match.group(1)
        if raw.endswith("/") or _extension(raw) in PATH_EXTENSIONS:  # not historical/deprecated
            plain = _blank(plain, match.start(1), match.end(1))
    return any(
        (begin <= at < stop or begin < until <= stop)
        and CONTEXT_WORDS.search(plain[begin:stop]) is not None
        for begin, stop in _sentences(plain)
    )


def identifier_target(text: str) -> str | None:
    """The word to look up for a backticked identifier, or None when ``text`` is not plainly
    code: a function (``name()``), a flag (``--dry-run``), a ``snake_case``, ``camelCase`` or
    ``PascalCase`` name, or a dotted name (``stripe.Charge``: its last part)."""
    called = text.endswith("()")
    name = text[:-2] if called else text
    flag = name.startswith("-")
    name = name.lstrip("-") if flag else name.lstrip("@")
    if _IDENTIFIER.fullmatch(name) is None or name.lower() in VALUES:
        return None
    if name in AGENT_TOOLS or _template(name) or _NUMBERED_ID.search(name) is not None:
        return None  # the agent's tools, templates, ids (act_3134027234) are not the project's
    parts = re.split(r"[.:]", name)
    last = parts[-1]
    if len(parts) > 1:
        if _extension(name) in PATH_EXTENSIONS or any(len(p) < 2 for p in parts):
            return None  # a file name (memdir.toml) or an abbreviation (e.g)
        return last if len(last) >= 3 else None
    if flag:
        return name if len(name) >= 3 and name[0].isalpha() else None
    if "-" in name:
        return None  # well-known, pre-commit: a hyphenated word unless a flag or a target
    if len(name) < 3:
        return None
    code_like = (
        called
        or ("_" in name.strip("_") and any(c.isalpha() for c in name))
        or _CAMEL.search(name) is not None
    )
    return name if code_like else None


def _runner_target(text: str) -> str | None:
    """``make build``, ``npm run lint``: the target or script named."""
    words = text.split()
    for runner in _RUNNERS:
        n = len(runner)
        if len(words) == n + 1 and tuple(words[:n]) == runner:
            target = words[n]
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:-]*", target) and len(target) >= 2:
                return target
    return None


def _program(command: str) -> str | None:
    """The program a backticked command runs (``FOO=1 sudo ./deploy.sh --x``: ``./deploy.sh``),
    or None for the project's own runners (``make deploy``, ``npm run lint``, ``just x``)."""
    words = command.split()
    while words and (words[0] in ("sudo", "env") or _ASSIGNMENT.match(words[0])):
        words.pop(0)
    if not words or words[0] in ("make", "just") or _runner_target(command) is not None:
        return None
    return words[0]


def _blank(line: str, start: int, end: int) -> str:
    return line[:start] + " " * (end - start) + line[end:]


def _sentences(plain: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a line whose code spans are blanked."""
    bounds: list[tuple[int, int]] = []
    begin = 0
    for match in _SENTENCE_END.finditer(plain):
        bounds.append((begin, match.end()))
        begin = match.end()
    bounds.append((begin, len(plain)))
    return bounds


def _line_citations(line: str, here: int) -> list[Citation]:
    """The citations of one line outside fenced blocks, ``here`` its offset in the text."""
    found: list[Citation] = []
    plain = line
    #: Programs named in the line's commands, by position: a flag is theirs when they share a
    #: sentence.
    programs: list[tuple[int, str]] = []
    flags: list[Citation] = []
    for match in _CODE_SPAN.finditer(line):
        plain = _blank(plain, match.start(), match.end())
        content = match.group(2).strip()
        if not content:  # `` ` ` ``, or only a full-width space: nothing cited
            continue
        at = here + match.start(2) + match.group(2).index(content[:1])
        if any(c.isspace() for c in content):
            target = _runner_target(content)
            if target is not None:
                begin = at + content.rindex(target)
                found.append(Citation("identifier", begin, begin + len(target), target, target))
            program = _program(content)
            if program is not None:
                programs.append((match.start(), program))
            continue  # other words of a command (its flags, its arguments) are the program's
        if content in OTHER_PROGRAMS:
            programs.append((match.start(), content))
            continue
        path = path_target(content)
        if path is not None:
            found.append(Citation("path", at, at + len(content), content, path))
            continue
        word = identifier_target(content)
        if word is not None:
            parts = re.split(r"[.:]", content.lstrip("-@"))
            qualifier = parts[0] if len(parts) > 1 else None
            cited = Citation("identifier", at, at + len(content), content, word, "code", qualifier)
            (flags if content.startswith("-") else found).append(cited)
    if flags:
        programs += [(m.start(), m.group().lower()) for m in _PROGRAM_WORDS.finditer(plain)]
        for begin, end in _sentences(plain):
            named = tuple(p for at, p in programs if begin <= at < end)
            if any(p in OTHER_PROGRAMS for p in named):
                continue  # `git commit` ... `--no-verify`: git's flag, not the project's
            for flag in flags:
                if begin <= flag.start - here < end:
                    found.append(replace(flag, programs=named))
    for match in _LINK.finditer(plain):
        plain = _blank(plain, match.start(), match.end())
        raw = match.group(1)
        if raw.startswith(("#", "mailto:")) or "%" in raw or "?" in raw:
            continue
        target = raw.split("#", 1)[0]
        path = path_target(target) if target else None
        if path is not None:
            begin = here + match.start(1)
            found.append(Citation("path", begin, begin + len(target), target, path, "link"))
    for match in _BARE_PATH.finditer(plain):
        raw = match.group(1).rstrip(".")
        after = plain[match.end(1) : match.end(1) + 1]
        if raw.endswith("/") and after.isalnum():
            continue  # src/app/新.py: the path goes on in letters the pattern stops at
        if not raw.endswith("/") and _extension(raw) not in PATH_EXTENSIONS:
            continue  # read/write, and/or: words, not paths
        path = path_target(raw)
        if path is not None and "/" in path:
            begin = here + match.start(1)
            found.append(Citation("path", begin, begin + len(raw), raw, path, "bare"))
    return found


def extract_citations(text: str, start: int = 0) -> list[Citation]:
    """Every path and identifier ``text`` cites from offset ``start`` on (fenced blocks
    skipped), in order."""
    found: list[Citation] = []
    fences = Fences()
    offset = start
    for line in text[start:].split("\n"):
        here = offset
        offset += len(line) + 1
        if not fences.is_code(line):
            found += _line_citations(line, here)
    found.sort(key=lambda c: c.start)
    return found


def cited_words(directory: Path) -> set[str]:
    """Every identifier the memories of ``directory`` cite (and the qualifiers of dotted
    ones): what a one-off run looks up in one pass
    (:meth:`memdir.project.lookup.Project.find_words`)."""
    from memdir.agent.scan import iter_topic_entries
    from memdir.textio import MAX_PARSE_BYTES, read_text

    words: set[str] = set()
    paths = [path for path, _ in iter_topic_entries(directory, [])]
    paths.append(os.path.join(directory, C.INDEX_FILENAME))
    for path in paths:
        try:
            text = read_text(Path(path), MAX_PARSE_BYTES).text
        except OSError:
            continue
        for citation in extract_citations(text):
            if citation.kind == "identifier":
                words.add(citation.target)
                if citation.qualifier is not None:
                    words.add(citation.qualifier)
                words.update(p for p in citation.programs if not _path_like(p))
    return words


def _path_like(program: str) -> bool:
    return "/" in program or _extension(program) in SOURCE_EXTENSIONS
