"""Where the agent keeps a project's memory, and whether it uses memory at all.

Reproduces the agent's location rules (spec section 2, as Claude Code 2.1.328 runs them; the
evidence is in docs/agent-fidelity.md): the switches, the configured dirs, the config root, the
canonical git root (worktrees share the main repository's memory), the slug of the project path
and the long-slug rule. Everything here is a pure function of the file system and the arguments
(environment and home passed in), so tests can build fixtures instead of touching ``~``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memdir import constants as C
from memdir.target import DEFAULT_TARGET, Target

_PROJECT_DIR_NAME = re.compile(C.PROJECT_DIR_NAME_PATTERN)
_WINDOWS_RESERVED = re.compile(C.WINDOWS_RESERVED_NAME_PATTERN, re.IGNORECASE)
#: Network and automounter paths the agent refuses as a memory dir: UNC (``//host``, ``\\?\``),
#: ``/net`` (autofs) and macOS ``/.vol``.
_REFUSED_DIR = re.compile(r"^(?:[\\/]{2}|/net(?:/|$)|/\.vol(?:/|$))")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _nfc(path: str) -> str:
    return unicodedata.normalize("NFC", path)


def _normalize(path: str) -> str:
    """``path.normalize`` of Node: ``..`` folded, one leading slash (Python keeps two)."""
    normal = os.path.normpath(path)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def config_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR`` as written (no ``~`` expansion; empty is the relative dir ``.``),
    else ``<home>/.claude``; NFC-normalised like the agent's."""
    env = os.environ if env is None else env
    configured = env.get(C.CONFIG_DIR_ENV)
    if configured is not None:
        return Path(_nfc(configured))
    return Path(_nfc(os.path.join(home or Path.home(), C.DEFAULT_CONFIG_DIRNAME)))


def state_dir(env: Mapping[str, str], home: Path) -> Path:
    """memdir's own per-user state: ``$XDG_STATE_HOME/memdir``, else ``~/.local/state/memdir``
    (a relative XDG value is ignored, as the XDG spec asks). Nothing in a memory dir or a
    project can choose it."""
    base = env.get("XDG_STATE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else home / ".local" / "state"
    return root / "memdir"


#: The folder of :func:`state_dir` holding memdir's bookkeeping of each memory dir.
DIR_STATES_DIRNAME = "dirs"


def dir_state_path(memory_dir: Path, env: Mapping[str, str], home: Path) -> Path:
    """Where memdir keeps its own files of one memory dir (the write lock, the intent journal,
    the extraction lock): ``<state_dir>/dirs/<sha256 of the dir's real path>``. Out of the dir,
    so a repository cannot plant them and they never show in ``git status``; keyed by the real
    path, so every spelling of the dir and every face of one user (CLI, MCP, language server,
    hook) meet at the same lock. Pure: creating and checking it is the writer's
    (:func:`memdir.writing.journal.dir_state`)."""
    real = os.path.realpath(memory_dir)
    key = hashlib.sha256(os.fsencode(real)).hexdigest()
    return state_dir(env, home) / DIR_STATES_DIRNAME / key


def _utf16_units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def slugify(project_path: str | os.PathLike[str]) -> str:
    """Every UTF-16 unit that is not an ASCII letter or digit becomes ``-`` (so a character
    outside the BMP, an emoji, becomes ``--``); no Unicode normalisation first.

    The result may exceed :data:`~memdir.constants.MAX_SLUG_LENGTH`; see :func:`project_dir_name`.
    """
    return "".join(
        ch if ch.isascii() and ch.isalnum() else "-" * (len(_utf16_units(ch)) // 2)
        for ch in os.fspath(project_path)
    )


def slug_prefix(slug: str) -> str | None:
    """For a slug over 200 characters (UTF-16 units: a slug is ASCII), the 200-character prefix
    the agent's directory name starts with; None for a slug short enough to be the name."""
    return slug[: C.MAX_SLUG_LENGTH] if len(slug) > C.MAX_SLUG_LENGTH else None


def slug_hash(key: str | os.PathLike[str]) -> str:
    """The agent's long-slug suffix: Java's ``String.hashCode`` of the unslugged path over its
    UTF-16 units (32-bit, signed), made positive and written in base 36."""
    units = _utf16_units(os.fspath(key))
    value = 0
    for i in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    number = abs(value - (1 << 32) if value >= 1 << 31 else value)
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = _BASE36[digit] + digits
        if number == 0:
            return digits


def project_dir_name(key: str | os.PathLike[str]) -> str:
    """The agent's directory name under ``projects/`` for the project path ``key``: its slug,
    or past 200 units the slug's first 200 and ``-<hash>``."""
    slug = slugify(key)
    prefix = slug_prefix(slug)
    return slug if prefix is None else f"{prefix}-{slug_hash(key)}"


def _regular_file(path: str) -> bool:
    """A regular file, not reached through a symlink (the agent refuses those in a git dir)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _git_entry(path: str) -> bool:
    """A ``.git`` that counts: a directory or a file (also through a symlink)."""
    return os.path.isdir(path) or os.path.isfile(path)


#: A settings file larger than this is not read (the agent's are a few KiB at most).
MAX_SETTINGS_BYTES = 1024 * 1024
#: A ``.git`` file, ``commondir`` or ``gitdir`` names one path: more than this is not one.
_MAX_POINTER_BYTES = 64 * 1024


def _read_small(path: str | Path, max_bytes: int, *, follow_links: bool = True) -> str:
    """A small file a project supplies, whole: a regular file only (never a FIFO or device,
    never blocking), at most ``max_bytes`` (:func:`memdir.textio.read_bytes`); OSError else."""
    from memdir.textio import read_bytes  # the reader every untrusted file goes through

    data = read_bytes(path, max_bytes, follow_links=follow_links, truncate=False)
    return data.decode("utf-8", errors="replace")


def _read_stripped(path: str, *, follow_links: bool = True) -> str:
    return _read_small(path, _MAX_POINTER_BYTES, follow_links=follow_links).strip()


def _resolve(base: str, path: str) -> str:
    return _normalize(os.path.join(base, path))


def _worktree_main_root(root: str) -> str:
    """For a ``.git`` file at ``root``: the main repository's root when it is a linked worktree
    whose links check out both ways, else ``root`` (a submodule, a hand-made ``gitdir:``, a
    moved or copied worktree). The result is as the git dir names it, not resolved further."""
    try:
        text = _read_stripped(os.path.join(root, ".git"))
        if not text.startswith("gitdir:"):
            return root
        git_dir = _resolve(root, text[len("gitdir:") :].strip())
        if not _regular_file(os.path.join(git_dir, "commondir")):
            return root
        commondir = os.path.join(git_dir, "commondir")
        common = _resolve(git_dir, _read_stripped(commondir, follow_links=False))
        # The git dir must be <common>/worktrees/<name> ...
        if _normalize(os.path.dirname(git_dir)) != _resolve(common, "worktrees"):
            return root
        # ... and its back-link must name this worktree's .git.
        if not _regular_file(os.path.join(git_dir, "gitdir")):
            return root
        back = _read_stripped(os.path.join(git_dir, "gitdir"), follow_links=False)
        if os.sep == "/" and any("\\" in p for p in (root, git_dir, back, common)):
            return root
        linked = os.path.realpath(_resolve(git_dir, back))
        if linked != os.path.join(os.path.realpath(root), ".git"):
            return root
    except (OSError, ValueError):
        return root
    if os.path.basename(common) != ".git":
        # A bare repository's worktree uses the repository, unless that holds a .git itself.
        return root if _git_entry(os.path.join(common, ".git")) else common
    return os.path.dirname(common)


def canonical_git_root(start: str | os.PathLike[str]) -> Path:
    """The project path the agent derives memory from.

    From the physical start directory (the agent's cwd), walk up to the first ``.git`` that is a
    directory or a file. A ``.git`` file of a linked worktree leads to the main repository's
    root, so every worktree of a repository shares one memory (a bare repository's worktree:
    the repository). Outside git, the start directory itself.
    """
    start_path = os.path.realpath(os.fspath(start))
    tree = git_work_tree(start_path)
    if tree is None:
        return Path(start_path)
    if os.path.isfile(tree / ".git"):
        return Path(_worktree_main_root(os.fspath(tree)))
    return tree


def git_work_tree(start: str | os.PathLike[str]) -> Path | None:
    """The git work tree ``start`` lies in (its physical path): the nearest directory at or
    above it holding a ``.git`` directory or file; None outside git. A linked worktree is
    itself, not its main repository (:func:`canonical_git_root` goes on to that)."""
    directory = os.path.realpath(os.fspath(start))
    while True:
        if _git_entry(os.path.join(directory, ".git")):
            return Path(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


@dataclass(frozen=True)
class MemoryLocation:
    """Where a project's memory lives, and how that was decided."""

    #: The memory directory, or None when it can only be named by a prefix that matches nothing.
    memory_dir: Path | None
    project_root: Path
    #: The project's directory name under ``projects/`` (the whole slug when only a prefix of it
    #: is known).
    slug: str
    #: ``env:<variable>`` or ``setting:<file>`` for a configured dir; ``derived`` (the default
    #: ``projects/<slug>/memory``), ``derived:hash`` (a long slug with the computed hash) or
    #: ``derived:prefix`` (a long slug found by its 200-character prefix).
    source: str
    enabled: bool = True
    #: Glob of the agent's directory name when the slug is over 200 characters.
    prefix_pattern: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, object]:
        return {
            "memory_dir": str(self.memory_dir) if self.memory_dir else None,
            "project_root": str(self.project_root),
            "slug": self.slug,
            "source": self.source,
            "enabled": self.enabled,
            "exists": bool(self.memory_dir and self.memory_dir.is_dir()),
            "prefix_pattern": self.prefix_pattern,
            "notes": list(self.notes),
        }


def _load_settings(path: Path, notes: list[str]) -> dict[str, object]:
    """A settings file's JSON object ({} when there is none). A project can supply one, so it is
    read defensively: a regular file only, at most :data:`MAX_SETTINGS_BYTES`, nesting too deep
    for the parser ignored with a note. A symlink is followed, as the agent follows it: the
    file only places memory (where the agent also reads it from) or switches it off."""
    try:
        raw = _read_small(path, MAX_SETTINGS_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as exc:
        notes.append(f"could not read {path}: {exc.strerror or exc}")
        return {}
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        notes.append(f"ignored {path}: invalid JSON at line {exc.lineno}: {exc.msg}")
        return {}
    except RecursionError:
        notes.append(f"ignored {path}: nested too deeply to read")
        return {}
    if not isinstance(data, dict):
        notes.append(f"ignored {path}: not a JSON object")
        return {}
    return data


def _policy_files(policy_paths: tuple[str, ...]) -> list[Path]:
    """The first policy location in use: its drop-ins (last name first), then its base file."""
    for candidate in policy_paths:
        base = Path(candidate)
        drop_ins = base.parent / C.POLICY_DROP_IN_DIRNAME
        if not (base.is_file() or drop_ins.is_dir()):
            continue
        names: list[str] = []
        try:
            with os.scandir(drop_ins) as entries:
                names = sorted(
                    entry.name
                    for entry in entries
                    if entry.name.endswith(".json") and not entry.name.startswith(".")
                    if entry.is_file() or entry.is_symlink()
                )
        except OSError:
            pass
        return [drop_ins / name for name in reversed(names)] + [base]
    return []


def _owned(*paths: Path) -> bool:
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    try:
        return all(p.stat().st_uid == getuid() for p in paths if p.exists())
    except OSError:
        return False


def settings_files(
    start: Path,
    project_root: Path,
    root: Path,
    policy_paths: tuple[str, ...] = C.POLICY_SETTINGS_PATHS,
    target: Target = DEFAULT_TARGET,
    *,
    home: Path | None = None,
    trusted: bool = True,
) -> list[tuple[str, Path]]:
    """The settings files that can place or switch off memory, highest precedence first:
    policy (drop-ins over the base file), local (the canonical root's over the start dir's),
    shared (the start dir's, where ``target`` reads it), user. Local and shared only when the
    workspace is ``trusted``; a relative config ``root`` is taken from ``start``."""
    files = [("policy", path) for path in _policy_files(policy_paths)]
    if trusted:
        local = C.LOCAL_SETTINGS_FILENAME
        real_home = os.path.realpath(home) if home is not None else None
        # The canonical root's own file, when that root is the user's (the agent checks who owns
        # it, so a repository someone else controls cannot place memory) ...
        if os.path.realpath(project_root) != real_home and _owned(
            project_root, project_root / ".git", project_root / ".claude"
        ):
            files.append(("local", project_root / ".claude" / local))
        # ... and the start dir's, below it.
        if not files or files[-1][1] != start / ".claude" / local:
            files.append(("local", start / ".claude" / local))
        if target.shared_settings_place_memory:
            files.append(("shared", start / ".claude" / C.SETTINGS_FILENAME))
    files.append(("user", start / root / C.SETTINGS_FILENAME))
    return files


def _env_switch(value: str | None) -> bool | None:
    """An on/off environment variable: True for 1/true/yes/on, False for 0/false/no/off (trimmed,
    any case), None for anything else."""
    word = (value or "").strip().lower()
    if word in C.ENV_TRUE_WORDS:
        return True
    if word in C.ENV_FALSE_WORDS:
        return False
    return None


def _configured_dir(value: str, home: Path | None) -> str | None:
    """A configured memory dir as the agent accepts it, or None when it refuses it: absolute
    (``..`` folded, trailing separators dropped) and at least 3 characters, or with ``home`` given
    ``~/…`` below the home directory (never the home itself or above it); not trimmed, not
    network paths, NFC-normalised."""
    if not value:
        return None
    path = value
    if home is not None and path.startswith(("~/", "~\\")):
        rest = _normalize(path[2:] or ".")
        if rest in (".", "..") or rest.startswith(("../", "..\\")):
            return None
        path = os.path.join(home, path[2:])
    path = _normalize(path).rstrip("/\\")
    if (
        not os.path.isabs(path)
        or len(path) < C.MIN_CONFIGURED_DIR_LENGTH
        or re.fullmatch(r"[A-Za-z]:", path)
        or _REFUSED_DIR.match(path)
        or "\x00" in path
    ):
        return None
    return _nfc(path)


def _refused(what: str, value: str, where: str) -> str:
    return (
        f"ignored {what}={value!r} in {where}: the agent takes only an absolute path or ~/ "
        "followed by a folder below the home directory, and uses the default dir instead"
    )


def _switched_off(env: Mapping[str, str]) -> tuple[bool | None, str | None]:
    """Memory forced off (False, why) or on (True, None) by the environment, or (None, None)."""
    if _env_switch(env.get(C.SAFE_MODE_ENV)):
        return False, f"auto memory is off in safe mode ({C.SAFE_MODE_ENV})"
    # Simple (bare) mode replaces the whole system prompt: no memory, even when forced on.
    if _env_switch(env.get(C.SIMPLE_MODE_ENV)):
        return False, f"auto memory is off in simple mode ({C.SIMPLE_MODE_ENV})"
    forced = _env_switch(env.get(C.DISABLE_AUTO_MEMORY_ENV))
    if forced is not None:
        return (
            (False, f"auto memory is disabled by {C.DISABLE_AUTO_MEMORY_ENV}")
            if forced
            else (
                True,
                None,
            )
        )
    if (
        _env_switch(env.get(C.REMOTE_SESSION_ENV))
        and not env.get(C.REMOTE_MEMORY_ROOT_ENV)
        and not env.get(C.COWORK_MEMORY_DIR_ENV)
    ):
        return False, (
            f"auto memory is off in a remote session ({C.REMOTE_SESSION_ENV}) without "
            f"{C.REMOTE_MEMORY_ROOT_ENV} or {C.COWORK_MEMORY_DIR_ENV}"
        )
    return None, None


def locate_memory_dir(
    project_path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    policy_paths: tuple[str, ...] = C.POLICY_SETTINGS_PATHS,
    target: Target = DEFAULT_TARGET,
) -> MemoryLocation:
    """The memory directory the agent uses for the project containing ``project_path`` (its
    working directory; the physical path counts), and whether memory is on there.

    A relative ``CLAUDE_CONFIG_DIR`` (or ``~/…``, which the agent does not expand) is relative
    to that working directory; the result is absolute all the same."""
    env = os.environ if env is None else env
    home = home or Path.home()
    start = Path(os.path.realpath(os.fspath(project_path if project_path is not None else ".")))
    project_root = canonical_git_root(start)
    root = config_root(env, home)
    notes: list[str] = []
    if not root.is_absolute():
        notes.append(
            f"{C.CONFIG_DIR_ENV}={env.get(C.CONFIG_DIR_ENV)!r} is a relative path (the agent "
            f"expands no ~ in it): the agent takes it from its working directory, {start}"
        )

    enabled, why = _switched_off(env)
    if why:
        notes.append(why)
    trusted = not _env_switch(env.get(C.IGNORE_TRUST_ENV))
    if not trusted:
        notes.append(f"local and shared project settings are not read ({C.IGNORE_TRUST_ENV})")

    #: (source, the dir or None when the agent refuses the value): the first one set decides.
    override: tuple[str, str | None] | None = None
    cowork = env.get(C.COWORK_MEMORY_DIR_ENV, "")
    if cowork:
        # No ~/ expansion here; a refused value leaves the settings to decide.
        cowork_dir = _configured_dir(cowork, None)
        if cowork_dir is None:
            notes.append(_refused(C.COWORK_MEMORY_DIR_ENV, cowork, "the environment"))
        else:
            override = (f"env:{C.COWORK_MEMORY_DIR_ENV}", cowork_dir)
    for kind, path in settings_files(
        start, project_root, root, policy_paths, target, home=home, trusted=trusted
    ):
        data = _load_settings(path, notes)
        switch = data.get(C.AUTO_MEMORY_ENABLED_SETTING)
        if enabled is None and isinstance(switch, bool):
            enabled = switch
            if not switch:
                notes.append(
                    f"auto memory is disabled by {C.AUTO_MEMORY_ENABLED_SETTING} in {path}"
                )
        value = data.get(C.AUTO_MEMORY_DIRECTORY_SETTING)
        if override is not None or not isinstance(value, str):
            continue
        # The first file that sets it decides, even with a value the agent refuses.
        override = (f"setting:{kind}", _configured_dir(value, home))
        if override[1] is None:
            notes.append(_refused(C.AUTO_MEMORY_DIRECTORY_SETTING, value, str(path)))
        elif kind == "shared":
            notes.append(
                f"{C.AUTO_MEMORY_DIRECTORY_SETTING} comes from the shared project settings "
                f"{path}: a cloned repository can redirect memory writes; check it"
            )
    if not target.shared_settings_place_memory:
        shared_path = start / ".claude" / C.SETTINGS_FILENAME
        if C.AUTO_MEMORY_DIRECTORY_SETTING in _load_settings(shared_path, []):
            notes.append(
                f"ignored {C.AUTO_MEMORY_DIRECTORY_SETTING} in the shared project settings "
                f"{shared_path}: a cloned repository could redirect memory writes; set it in "
                "user or local settings instead"
            )
    enabled = True if enabled is None else enabled

    key = os.fspath(project_root)
    if override is not None and override[1] is not None:
        directory, name = Path(override[1]), project_dir_name(key)
        return MemoryLocation(
            directory, project_root, name, override[0], enabled, None, tuple(notes)
        )

    remote = env.get(C.REMOTE_MEMORY_ROOT_ENV, "")
    projects = _projects_dir(start, remote or os.fspath(root))
    named = _named_project_dir(env, (remote or os.fspath(root)) == os.fspath(root), notes)
    if named is not None:
        directory = projects / named / C.MEMORY_DIRNAME
        return MemoryLocation(
            directory, project_root, named, "derived", enabled, None, tuple(notes)
        )
    if remote:
        notes.append(f"derived under {C.REMOTE_MEMORY_ROOT_ENV}")
    found, slug, source, pattern = _derived_dir(projects, key, target, notes)
    return MemoryLocation(found, project_root, slug, source, enabled, pattern, tuple(notes))


def _projects_dir(start: Path, base: str) -> Path:
    """``<base>/projects`` as the agent joins it (normalised, NFC), taken from the working
    directory ``start`` when ``base`` is relative."""
    return start / _nfc(_normalize(os.path.join(base, C.PROJECTS_DIRNAME)))


def _named_project_dir(
    env: Mapping[str, str], under_config_root: bool, notes: list[str]
) -> str | None:
    """``CLAUDE_CODE_PROJECT_DIR_NAME`` where the agent uses it as the project's directory name:
    with ``CLAUDE_CONFIG_DIR`` set (not empty), derived under the config root, a valid name."""
    named = env.get(C.PROJECT_DIR_NAME_ENV, "")
    if not named:
        return None
    if not (under_config_root and env.get(C.CONFIG_DIR_ENV)):
        notes.append(
            f"ignored {C.PROJECT_DIR_NAME_ENV}: the agent reads it only with {C.CONFIG_DIR_ENV} "
            f"set and without {C.REMOTE_MEMORY_ROOT_ENV}"
        )
        return None
    if not _PROJECT_DIR_NAME.match(named) or _WINDOWS_RESERVED.match(named):
        notes.append(
            f"ignored {C.PROJECT_DIR_NAME_ENV}={named!r}: the agent takes 1 to 64 letters, "
            "digits, - or _, and no reserved Windows device name"
        )
        return None
    notes.append(f"the project's directory is named by {C.PROJECT_DIR_NAME_ENV}")
    return named


def _derived_dir(
    projects: Path, key: str, target: Target, notes: list[str]
) -> tuple[Path | None, str, str, str | None]:
    """The default memory dir below ``projects`` for the project path ``key``: (the dir, its
    project directory's name, the source, the long-slug glob)."""
    slug = slugify(key)
    prefix = slug_prefix(slug)
    if prefix is None:
        return projects / slug / C.MEMORY_DIRNAME, slug, "derived", None
    pattern = f"{prefix}-*"
    matches = [m for m in sorted(projects.glob(pattern)) if m.is_dir()] if projects.is_dir() else []
    if target.slug_hash_computed:
        name = project_dir_name(key)
        if (projects / name).is_dir() or not matches:
            return projects / name / C.MEMORY_DIRNAME, name, "derived:hash", pattern
        # Kept for agent builds whose hash differs (the spec says runtimes differ).
        notes.append(
            f"the agent names this project's directory {name}, which does not exist, but "
            f"{pattern} matches: using that (a build with another hash made it)"
        )
    if len(matches) > 1:
        # Several runtimes hashed the same path differently; the most recently used one wins.
        matches.sort(key=lambda m: m.stat().st_mtime, reverse=True)
        notes.append(f"{len(matches)} directories match {pattern}; using the most recent")
    if not matches:
        notes.append(
            f"the project path is over {C.MAX_SLUG_LENGTH} characters, so the agent names its "
            f"directory {projects / pattern} with a runtime-specific hash; none exists yet"
        )
        return None, slug, "derived:prefix", pattern
    return matches[0] / C.MEMORY_DIRNAME, slug, "derived:prefix", pattern


def is_agent_memory_dir(
    path: Path, env: Mapping[str, str] | None = None, home: Path | None = None
) -> bool:
    """``path`` is a memory dir the agent keeps under its config root: a project's
    (``<config>/projects/<name>/memory``) or a subagent's user scope
    (``<config>/agent-memory/<agent>``). A repository cannot put one there, unlike a folder
    that merely holds a ``MEMORY.md``."""
    root = config_root(env, home)
    real = Path(os.path.realpath(path))
    projects = Path(os.path.realpath(root / C.PROJECTS_DIRNAME))
    if real.name == C.MEMORY_DIRNAME and real.parent.parent == projects:
        return True
    return real.parent == Path(os.path.realpath(root / "agent-memory"))


def display_path(path: Path, relative_to: Path | None) -> str:
    """How output for a person names a file: relative to ``relative_to`` (the working directory,
    for the command line) when the file lies there as written, else absolute, as ruff does;
    ``None``: always absolute."""
    if relative_to is not None and path.is_relative_to(relative_to):
        return str(path.relative_to(relative_to))
    return str(path)


# --- names that are one file on some systems and two on others ------------------------------------

#: Characters that render as nothing beyond Unicode's format controls (category Cf: zero-width
#: space and joiners, word joiner, BOM, soft hyphen, bidi marks): the Hangul fillers and the
#: combining grapheme joiner.
_BLANKS = frozenset("\u034f\u115f\u1160\u3164\uffa0")


def name_key(name: str) -> str:
    """A name as a case-insensitive, normalising file system (macOS, Windows) compares it:
    ``A.md`` and ``a.md``, or ``é.md`` composed (NFC) and decomposed (NFD), are one name there."""
    if name.isascii():
        return name.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def unportable_name(name: str) -> str | None:
    """Why ``name`` (one segment of a path) is not the same file everywhere, or None: an
    invisible character (it looks like another name), a trailing dot or space (Windows drops
    it), a Windows device name (``CON.md``, ``nul.md``, ``COM1.md``: no file can have it)."""
    if not name.isascii():
        for char in name:
            if char in _BLANKS or unicodedata.category(char) == "Cf":
                what = unicodedata.name(char, "format character").lower()
                return f"it holds an invisible character (U+{ord(char):04X} {what})"
    if name != name.rstrip(". "):
        return "it ends with a dot or a space, which Windows drops, so there it is another name"
    stem = name.split(".", 1)[0].rstrip(" ")
    if _WINDOWS_RESERVED.match(stem):
        return f"{stem} is a device name on Windows, which no file there can have"
    return None
