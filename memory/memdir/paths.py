"""Where the agent keeps a project's memory.

Reproduces the agent's location rules (spec section 2): the config root, the canonical git root
(worktrees share the main repository's memory), the slug of the project path, the long-slug rule
and the ``autoMemoryDirectory`` override. Everything here is a pure function of the file system
and the environment passed in, so tests can build fixtures instead of touching ``~``.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memdir import constants as C
from memdir.target import DEFAULT_TARGET, Target

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")


def config_root(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR`` if set, else ``~/.claude``."""
    env = os.environ if env is None else env
    configured = env.get(C.CONFIG_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return (home or Path.home()) / C.DEFAULT_CONFIG_DIRNAME


def slugify(project_path: str | os.PathLike[str]) -> str:
    """Every character that is not an ASCII letter or digit becomes ``-``.

    The result may exceed :data:`~memdir.constants.MAX_SLUG_LENGTH`; see :func:`slug_prefix`.
    """
    return _NON_ALNUM.sub("-", os.fspath(project_path))


def slug_prefix(slug: str) -> str | None:
    """For a slug over 200 characters, the 200-character prefix the agent's directory starts with.

    The agent appends ``-<hash>`` to that prefix and the hash differs between its runtimes, so a
    long-path directory must be found by prefix, never by recomputing the hash.
    """
    return slug[: C.MAX_SLUG_LENGTH] if len(slug) > C.MAX_SLUG_LENGTH else None


def _read_gitdir_file(dot_git: Path) -> Path | None:
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            target = Path(line[len("gitdir:") :].strip())
            if not target.is_absolute():
                target = dot_git.parent / target
            return Path(os.path.normpath(target))
    return None


def _common_dir(git_dir: Path) -> Path:
    """A worktree's git dir names the shared repository in ``commondir``; others are their own."""
    try:
        text = (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return git_dir
    if not text:
        return git_dir
    common = Path(text)
    if not common.is_absolute():
        common = git_dir / common
    return Path(os.path.normpath(common))


def canonical_git_root(start: str | os.PathLike[str]) -> Path:
    """The project path the agent derives memory from.

    Walk up to the first ``.git`` (a directory, or a ``gitdir:`` file in a worktree or
    submodule). A worktree follows its git dir to the common dir and uses the main repository's
    root, so every worktree of a repository shares one memory; a bare repository (common dir not
    named ``.git``) uses its common dir. Outside git, the start directory itself.
    """
    start_path = Path(os.path.realpath(os.fspath(start)))
    for directory in (start_path, *start_path.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return directory
        if dot_git.is_file():
            git_dir = _read_gitdir_file(dot_git)
            if git_dir is None:
                return directory
            common = _common_dir(git_dir)
            if common == git_dir:
                # A submodule (or a plain gitdir redirect): its own working tree is the root.
                return directory
            if common.name == ".git":
                return Path(os.path.realpath(common.parent))
            return Path(os.path.realpath(common))
    return start_path


@dataclass(frozen=True)
class MemoryLocation:
    """Where a project's memory lives, and how that was decided."""

    #: The memory directory, or None when it can only be named by a prefix that matches nothing.
    memory_dir: Path | None
    project_root: Path
    slug: str
    #: ``setting:<file>``, ``derived`` or ``derived:prefix``.
    source: str
    enabled: bool = True
    #: Glob of the agent's directory name when the slug is too long to derive exactly.
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
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        notes.append(f"could not read {path}: {exc.strerror or exc}")
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        notes.append(f"ignored {path}: invalid JSON at line {exc.lineno}: {exc.msg}")
        return {}
    if not isinstance(data, dict):
        notes.append(f"ignored {path}: not a JSON object")
        return {}
    return data


def settings_files(
    project_root: Path,
    root: Path,
    policy_paths: tuple[str, ...] = C.POLICY_SETTINGS_PATHS,
    target: Target = DEFAULT_TARGET,
) -> list[tuple[str, Path]]:
    """The settings files that can place or switch off memory, highest precedence first:
    policy, local project, shared project (only where ``target`` reads it there), user."""
    files: list[tuple[str, Path]] = []
    for candidate in policy_paths:
        path = Path(candidate)
        if path.is_file():
            files.append(("policy", path))
            break
    files.append(("local", project_root / ".claude" / "settings.local.json"))
    if target.shared_settings_place_memory:
        files.append(("shared", project_root / ".claude" / "settings.json"))
    files.append(("user", root / "settings.json"))
    return files


def _env_switch(value: str | None) -> bool | None:
    """An on/off environment variable: True for 1/true/yes/on, False for 0/false/no/off."""
    word = (value or "").strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    return None


def _override_dir(value: str, home: Path) -> Path | None:
    """A configured memory dir as the agent accepts it: absolute or ``~/…`` below the home
    directory (never the home itself or above it), NFC-normalised; None when it is refused."""
    if "\x00" in value or len(value) < 3:
        return None
    if value.startswith("~/"):
        rest = os.path.normpath(value[2:]) if value[2:] else "."
        if rest in (".", "..") or rest.startswith("../") or rest.startswith("/"):
            return None
        path = os.path.join(home, rest)
    elif os.path.isabs(value):
        path = os.path.normpath(value)
    else:
        return None
    return Path(unicodedata.normalize("NFC", path))


def locate_memory_dir(
    project_path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    policy_paths: tuple[str, ...] = C.POLICY_SETTINGS_PATHS,
    target: Target = DEFAULT_TARGET,
) -> MemoryLocation:
    """The memory directory the agent uses for the project containing ``project_path``."""
    env = os.environ if env is None else env
    home = home or Path.home()
    project_root = canonical_git_root(project_path if project_path is not None else Path.cwd())
    root = config_root(env, home)
    slug = slugify(project_root)
    notes: list[str] = []

    # Switched off or on: the environment first, then the highest-precedence setting.
    enabled: bool | None = None
    forced = _env_switch(env.get(C.DISABLE_AUTO_MEMORY_ENV))
    if forced is not None:
        enabled = not forced
        if forced:
            notes.append(f"auto memory is disabled by {C.DISABLE_AUTO_MEMORY_ENV}")
    elif _env_switch(env.get(C.SIMPLE_MODE_ENV)):
        enabled = False
        notes.append(f"auto memory is off in simple mode ({C.SIMPLE_MODE_ENV})")

    override: tuple[str, Path] | None = None
    cowork = env.get(C.COWORK_MEMORY_DIR_ENV, "").strip()
    if cowork:
        directory = _override_dir(cowork, home)
        if directory is not None:
            override = (f"env:{C.COWORK_MEMORY_DIR_ENV}", directory)
    for kind, path in settings_files(project_root, root, policy_paths, target):
        data = _load_settings(path, notes)
        switch = data.get(C.AUTO_MEMORY_ENABLED_SETTING)
        if enabled is None and isinstance(switch, bool):
            enabled = switch
            if not switch:
                setting = C.AUTO_MEMORY_ENABLED_SETTING
                notes.append(f"auto memory is disabled by {setting} in {path}")
        value = data.get(C.AUTO_MEMORY_DIRECTORY_SETTING)
        if override is None and isinstance(value, str) and value.strip():
            directory = _override_dir(value.strip(), home)
            if directory is None:
                notes.append(
                    f"ignored {C.AUTO_MEMORY_DIRECTORY_SETTING}={value!r} in {path}: it must be "
                    "an absolute path or ~/ followed by a folder below the home directory"
                )
                continue
            override = (f"setting:{kind}", directory)
            if kind == "shared":
                notes.append(
                    f"{C.AUTO_MEMORY_DIRECTORY_SETTING} comes from the shared project settings "
                    f"{path}: a cloned repository can redirect memory writes; check it"
                )
    if not target.shared_settings_place_memory:
        shared = _load_settings(project_root / ".claude" / "settings.json", notes)
        if C.AUTO_MEMORY_DIRECTORY_SETTING in shared:
            notes.append(
                f"ignored {C.AUTO_MEMORY_DIRECTORY_SETTING} in the shared project settings "
                f"{project_root / '.claude' / 'settings.json'}: a cloned repository could "
                "redirect memory writes; set it in user or local settings instead"
            )
    enabled = True if enabled is None else enabled

    if override is not None:
        source, directory = override
        return MemoryLocation(directory, project_root, slug, source, enabled, None, tuple(notes))

    remote = env.get(C.REMOTE_MEMORY_ROOT_ENV, "").strip()
    projects = (Path(remote) if remote else root) / C.PROJECTS_DIRNAME
    prefix = slug_prefix(slug)
    if prefix is None:
        memory_dir = projects / slug / C.MEMORY_DIRNAME
        return MemoryLocation(
            memory_dir, project_root, slug, "derived", enabled, None, tuple(notes)
        )

    pattern = f"{prefix}-*"
    matches = sorted(projects.glob(pattern)) if projects.is_dir() else []
    matches = [m for m in matches if m.is_dir()]
    if len(matches) > 1:
        # Several runtimes hashed the same path differently; the most recently used one wins.
        matches.sort(key=lambda m: m.stat().st_mtime, reverse=True)
        notes.append(f"{len(matches)} directories match {pattern}; using the most recent")
    found = matches[0] / C.MEMORY_DIRNAME if matches else None
    if found is None:
        notes.append(
            f"the project path is over {C.MAX_SLUG_LENGTH} characters, so the agent names its "
            f"directory {projects / pattern} with a runtime-specific hash; none exists yet"
        )
    return MemoryLocation(
        found, project_root, slug, "derived:prefix", enabled, pattern, tuple(notes)
    )


def is_within(path: Path, root: Path) -> bool:
    """True when ``path`` (already resolved) is ``root`` or lies below it."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def relative_inside(root: Path, path: Path | str, *, follow_links: bool = True) -> str | None:
    """``path`` as a ``/``-separated path inside the memory dir ``root`` ("" for ``root``
    itself), or None when it is outside: the one answer to "is this inside the memory dir".

    A relative ``path`` is relative to ``root``. With ``follow_links`` (the default, for anything
    that reads or writes) symlinks are resolved, so a link leading out of the dir is outside.
    Without it the path is taken as written, under either spelling of ``root`` (as given or
    resolved): that names an editor's or a scan's path without touching the disk for it.
    """
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    absolute = Path(os.path.abspath(candidate))
    real_root = Path(os.path.realpath(root))
    if follow_links:
        bases = [(Path(os.path.realpath(absolute)), real_root)]
    else:
        bases = [(absolute, Path(os.path.abspath(root))), (absolute, real_root)]
    for location, base in bases:
        if is_within(location, base):
            rel = location.relative_to(base).as_posix()
            return "" if rel == "." else rel
    return None


def rel_path(root: Path, path: Path | str) -> str:
    """``path`` named relative to the memory dir ``root``: as written when it lies there, else
    with symlinks followed (an editor's or a scan's other spelling); ValueError outside it."""
    for follow_links in (False, True):
        rel = relative_inside(root, path, follow_links=follow_links)
        if rel is not None:
            return rel
    raise ValueError(f"{path} is not inside the memory dir {root}")
