from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from memdir.agent.paths import (
    canonical_git_root,
    config_root,
    locate_memory_dir,
    project_dir_name,
    settings_files,
    slug_hash,
    slug_prefix,
    slugify,
)
from memdir.target import SEED

NO_POLICY: tuple[str, ...] = ()


def _json(path: Path, data: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_config_root_is_taken_as_written(tmp_path: Path) -> None:
    assert config_root({"CLAUDE_CONFIG_DIR": str(tmp_path)}, home=Path("/h")) == tmp_path
    assert config_root({}, home=Path("/h")) == Path("/h/.claude")
    # No ~ expansion, and set-but-empty is the relative dir, not "unset".
    assert config_root({"CLAUDE_CONFIG_DIR": "~/cfg"}, home=Path("/h")) == Path("~/cfg")
    assert config_root({"CLAUDE_CONFIG_DIR": ""}, home=Path("/h")) == Path(".")
    assert config_root({"CLAUDE_CONFIG_DIR": "/c/cfe\u0301"}, home=Path("/h")) == Path(
        "/c/cf\u00e9"
    )


def test_slug_replaces_every_utf16_unit_that_is_not_ascii_alnum() -> None:
    assert slugify("/home/ana/src/app") == "-home-ana-src-app"
    assert slugify("/tmp/my_proj.v2/数据") == "-tmp-my-proj-v2---"
    assert slugify("/a b/c-d") == "-a-b-c-d"
    # An astral character is two UTF-16 units, so two dashes; NFD é is e + a combining mark.
    assert slugify("/a\U0001f600b") == "-a--b"
    assert slugify("/cafe\u0301") == "-cafe-"


def test_slug_prefix_only_for_long_slugs() -> None:
    assert slug_prefix("-" + "a" * 199) is None
    long = "-" + "a" * 250
    assert slug_prefix(long) == long[:200]


# Directory names Claude Code 2.1.328 created for these project paths (docs/agent-fidelity.md).
_LONG_PATH = "/tmp/loc/cases/long_path/" + "/".join(
    f"segment-number-{i:02d}-abcdefghij" for i in range(8)
)
_PATH_201 = "/tmp/loc/cases/long_path_201/"
_PATH_201 += "x" * (201 - len(_PATH_201))
_EMOJI = "/tmp/loc/cases/long_emoji/"
_EMOJI += "x" * (190 - len(_EMOJI)) + "\U0001f600" * 10


@pytest.mark.parametrize(
    ("key", "suffix"), [(_LONG_PATH, "286bvi"), (_PATH_201, "2y3817"), (_EMOJI, "xzaq4o")]
)
def test_long_slug_hash_is_the_agents(key: str, suffix: str) -> None:
    assert slug_hash(key) == suffix
    name = project_dir_name(key)
    assert name == slugify(key)[:200] + "-" + suffix
    assert len(name) == 201 + len(suffix)


def test_length_is_counted_in_utf16_units() -> None:
    # 200 code points but 210 units: over the limit only when counted as the agent counts.
    assert len(_EMOJI) == 200 and len(slugify(_EMOJI)) == 210
    assert project_dir_name(_EMOJI).endswith("-xzaq4o")
    exact = _EMOJI[:-5]  # 200 units: not shortened
    assert project_dir_name(exact) == slugify(exact) and len(slugify(exact)) == 200


def test_git_root_of_plain_repo_and_no_repo(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    assert canonical_git_root(repo / "src" / "pkg") == repo.resolve()
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    assert canonical_git_root(plain) == plain.resolve()


def _worktree(main_git: Path, wt: Path, name: str, *, relative: bool = False) -> Path:
    """A linked worktree ``wt`` of the repository whose git dir is ``main_git``, as git makes it."""
    gitdir = main_git / "worktrees" / name
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    (gitdir / "gitdir").write_text(str(wt / ".git") + "\n")
    wt.mkdir(parents=True)
    target = os.path.relpath(gitdir, wt) if relative else str(gitdir)
    (wt / ".git").write_text(f"gitdir: {target}\n")
    return gitdir


def test_worktree_resolves_to_main_repository(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    _worktree(main / ".git", tmp_path / "feature-wt", "feature-wt")
    (tmp_path / "feature-wt" / "deep").mkdir()
    assert canonical_git_root(tmp_path / "feature-wt" / "deep") == main.resolve()


def test_worktree_with_relative_gitdir(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    _worktree(main / ".git", tmp_path / "wt", "wt", relative=True)
    assert canonical_git_root(tmp_path / "wt") == main.resolve()


def test_worktree_of_bare_repo_uses_common_dir(tmp_path: Path) -> None:
    bare = tmp_path / "project.git"
    bare.mkdir()
    _worktree(bare, tmp_path / "wt", "wt")
    assert canonical_git_root(tmp_path / "wt") == bare.resolve()
    # ... unless the common dir holds a .git of its own.
    (bare / ".git").mkdir()
    assert canonical_git_root(tmp_path / "wt") == (tmp_path / "wt").resolve()


@pytest.mark.parametrize(
    "damage",
    [
        "no-backlink",
        "backlink-elsewhere",
        "no-commondir",
        "commondir-symlink",
        "not-under-worktrees",
    ],
)
def test_worktree_links_must_check_out_both_ways(tmp_path: Path, damage: str) -> None:
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    wt = tmp_path / "wt"
    gitdir = _worktree(main / ".git", wt, "wt")
    if damage == "no-backlink":
        (gitdir / "gitdir").unlink()
    elif damage == "backlink-elsewhere":  # a copied worktree: the link names the original
        (gitdir / "gitdir").write_text(str(tmp_path / "other" / ".git") + "\n")
    elif damage == "no-commondir":
        (gitdir / "commondir").unlink()
    elif damage == "commondir-symlink":
        (tmp_path / "cd").write_text("../..\n")
        (gitdir / "commondir").unlink()
        (gitdir / "commondir").symlink_to(tmp_path / "cd")
    else:
        moved = main / ".git" / "elsewhere" / "wt"
        moved.parent.mkdir()
        gitdir.rename(moved)
        (wt / ".git").write_text(f"gitdir: {moved}\n")
    assert canonical_git_root(wt) == wt.resolve()


def test_submodule_keeps_its_own_root(tmp_path: Path) -> None:
    main = tmp_path / "main"
    modules = main / ".git" / "modules" / "sub"
    modules.mkdir(parents=True)
    sub = main / "sub"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/sub\n")
    assert canonical_git_root(sub) == sub.resolve()


def test_worktrees_share_one_memory_dir(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    _worktree(main / ".git", tmp_path / "wt", "wt")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    a = locate_memory_dir(main, env=env, home=tmp_path, policy_paths=NO_POLICY)
    b = locate_memory_dir(tmp_path / "wt", env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert a.memory_dir == b.memory_dir
    assert a.memory_dir == tmp_path / "cfg" / "projects" / slugify(main.resolve()) / "memory"
    assert a.source == "derived"


def _long_project(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    project = tmp_path / ("x" * 120) / ("y" * 120)
    project.mkdir(parents=True)
    cfg = tmp_path / "cfg"
    return project, {"CLAUDE_CONFIG_DIR": str(cfg)}, cfg / "projects"


def test_long_path_gets_the_computed_hash(tmp_path: Path) -> None:
    project, env, projects = _long_project(tmp_path)
    key = str(project.resolve())
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == projects / project_dir_name(key) / "memory"
    assert loc.source == "derived:hash"
    assert loc.prefix_pattern == slugify(key)[:200] + "-*"


def test_long_path_falls_back_to_a_prefix_match_another_build_made(tmp_path: Path) -> None:
    project, env, projects = _long_project(tmp_path)
    slug = slugify(project.resolve())
    other = projects / f"{slug[:200]}-1a2b3c"
    (other / "memory").mkdir(parents=True)
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == other / "memory"
    assert loc.source == "derived:prefix"
    assert any("which does not exist" in n for n in loc.notes)
    # Once the agent's own directory exists, it wins.
    (projects / project_dir_name(str(project.resolve()))).mkdir()
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.source == "derived:hash"


def test_long_path_by_prefix_only_for_the_seed_target(tmp_path: Path) -> None:
    project, env, projects = _long_project(tmp_path)
    missing = locate_memory_dir(
        project, env=env, home=tmp_path, policy_paths=NO_POLICY, target=SEED
    )
    slug = slugify(project.resolve())
    assert missing.memory_dir is None
    assert missing.prefix_pattern == slug[:200] + "-*"
    assert "runtime-specific hash" in missing.notes[-1]
    agent_dir = projects / f"{slug[:200]}-1a2b3c"
    (agent_dir / "memory").mkdir(parents=True)
    found = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY, target=SEED)
    assert found.memory_dir == agent_dir / "memory"
    assert found.source == "derived:prefix"


def test_auto_memory_directory_from_user_and_local_settings(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    cfg = tmp_path / "cfg"
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    _json(cfg / "settings.json", {"autoMemoryDirectory": "~/mem-user"})
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == tmp_path / "mem-user"
    assert loc.source == "setting:user"
    local = project / ".claude" / "settings.local.json"
    _json(local, {"autoMemoryDirectory": str(tmp_path / "mem-local")})
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == tmp_path / "mem-local"
    assert loc.source == "setting:local"


def test_settings_of_the_start_dir_in_a_subdirectory(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    sub = project / "sub"
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}

    def where() -> Path | None:
        return locate_memory_dir(sub, env=env, home=tmp_path, policy_paths=NO_POLICY).memory_dir

    # Shared settings count only in the start dir, not at the git root.
    _json(project / ".claude" / "settings.json", {"autoMemoryDirectory": "/srv/root-shared"})
    sub.mkdir()
    assert where() == tmp_path / "cfg" / "projects" / slugify(project) / "memory"
    _json(sub / ".claude" / "settings.json", {"autoMemoryDirectory": "/srv/sub-shared"})
    assert where() == Path("/srv/sub-shared")
    # Local settings: the start dir's over the shared, the git root's over both.
    _json(sub / ".claude" / "settings.local.json", {"autoMemoryDirectory": "/srv/sub-local"})
    assert where() == Path("/srv/sub-local")
    _json(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": "/srv/root-local"})
    assert where() == Path("/srv/root-local")
    files = settings_files(sub, project, tmp_path / "cfg", NO_POLICY)
    assert [kind for kind, _ in files] == ["local", "local", "shared", "user"]


def test_worktree_reads_both_local_settings(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    wt = tmp_path / "wt"
    _worktree(main / ".git", wt, "wt")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    _json(wt / ".claude" / "settings.local.json", {"autoMemoryDirectory": "/srv/wt"})
    loc = locate_memory_dir(wt, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == Path("/srv/wt")
    _json(main / ".claude" / "settings.local.json", {"autoMemoryDirectory": "/srv/main"})
    loc = locate_memory_dir(wt, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == Path("/srv/main")


def test_policy_settings_win(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    policy = _json(tmp_path / "etc" / "managed-settings.json", {"autoMemoryDirectory": "/srv/mem"})
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": "~/mine"})
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=(str(policy),))
    assert loc.memory_dir == Path("/srv/mem")
    assert loc.source == "setting:policy"
    # A drop-in overrides the base file; the later name the earlier one.
    drop_ins = tmp_path / "etc" / "managed-settings.d"
    _json(drop_ins / "10-mem.json", {"autoMemoryDirectory": "/srv/drop-10"})
    _json(drop_ins / "20-mem.json", {"autoMemoryDirectory": "/srv/drop-20"})
    _json(drop_ins / "30-other.json", {"model": "x"})
    _json(drop_ins / ".hidden.json", {"autoMemoryDirectory": "/srv/hidden"})
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=(str(policy),))
    assert loc.memory_dir == Path("/srv/drop-20")
    # Drop-ins count without a base file too.
    policy.unlink()
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=(str(policy),))
    assert loc.memory_dir == Path("/srv/drop-20") and loc.source == "setting:policy"


def test_policy_switch_and_masking(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    policy = _json(tmp_path / "etc" / "managed-settings.json", {"autoMemoryDirectory": "relative"})
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": str(tmp_path / "mem-user")})
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=(str(policy),))
    # A value the agent refuses in policy still masks the user's: the default dir is used.
    assert loc.source == "derived"
    _json(policy, {"autoMemoryEnabled": False})
    _json(project / ".claude" / "settings.local.json", {"autoMemoryEnabled": True})
    assert not locate_memory_dir(project, env=env, policy_paths=(str(policy),)).enabled
    forced = {**env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}
    assert locate_memory_dir(project, env=forced, policy_paths=(str(policy),)).enabled


def test_the_windows_policy_file_is_under_program_files() -> None:
    from memdir.constants import POLICY_SETTINGS_PATHS

    assert "C:\\Program Files\\ClaudeCode\\managed-settings.json" in POLICY_SETTINGS_PATHS


def test_shared_project_settings_place_memory_as_the_agent_lets_them(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _json(project / ".claude" / "settings.json", {"autoMemoryDirectory": "/tmp/evil"})
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": "/tmp/mine"})
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    # Claude Code 2.1.328 reads it, over the user's own setting; memdir says where it came from.
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == Path("/tmp/evil") and loc.source == "setting:shared"
    assert any("a cloned repository can redirect memory writes" in n for n in loc.notes)
    # The spec (target "seed") distrusts it.
    seed = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY, target=SEED)
    assert seed.memory_dir == Path("/tmp/mine") and seed.source == "setting:user"
    assert any("shared project settings" in n for n in seed.notes)


def test_untrusted_workspace_reads_neither_local_nor_shared_settings(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _json(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": "/srv/local"})
    _json(project / ".claude" / "settings.json", {"autoMemoryDirectory": "/srv/shared"})
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": "/srv/user"})
    env = {"CLAUDE_CONFIG_DIR": str(cfg), "CLAUDE_CODE_IGNORE_PERSISTED_TRUST": "1"}
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == Path("/srv/user")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("~/notes/mem", "HOME/notes/mem"),
        ("/srv/mem/", "/srv/mem"),
        ("/srv/mem///", "/srv/mem"),
        ("/srv/a/../mem", "/srv/mem"),  # normalised
        ("/srv/cafe\u0301", "/srv/caf\u00e9"),  # NFC, as the agent normalises it
        ("/ab", "/ab"),
        ("~/", None),
        ("~", None),
        ("~/../escape", None),
        ("~/a/../../b", None),
        ("~root/x", None),
        ("$HOME/x", None),
        ("relative/dir", None),
        ("/", None),
        ("/a", None),  # too short
        ("  /srv/mem  ", None),  # not trimmed: relative
        ("", None),
        ("//host/share/mem", "/host/share/mem"),  # POSIX: normalised to one slash
        ("/net/host/mem", None),
        ("/srv/m\x00em", None),
    ],
)
def test_configured_dirs_the_agent_accepts(
    tmp_path: Path, value: str, expected: str | None
) -> None:
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": value})
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    loc = locate_memory_dir(tmp_path, env=env, home=tmp_path / "h", policy_paths=NO_POLICY)
    if expected is None:
        assert loc.source == "derived"
        if value:
            assert any("only an absolute path or ~/" in n for n in loc.notes)
    else:
        assert str(loc.memory_dir) == expected.replace("HOME", str(tmp_path / "h"))


def test_a_refused_value_masks_lower_settings(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _json(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": "rel"})
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": str(tmp_path / "mem-user")})
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.source == "derived"
    assert loc.memory_dir == cfg / "projects" / slugify(project.resolve()) / "memory"
    # A value that is not a string is no value at all.
    _json(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": 123})
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.source == "setting:user"


def test_relative_config_dir_is_taken_from_the_working_directory(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    slug = slugify(project)
    for configured, base in [("~/cfg", project / "~" / "cfg"), ("", project), ("c", project / "c")]:
        env = {"CLAUDE_CONFIG_DIR": configured}
        loc = locate_memory_dir(project, env=env, home=tmp_path / "h", policy_paths=NO_POLICY)
        assert loc.memory_dir == base / "projects" / slug / "memory"
        assert any("relative path" in n for n in loc.notes)


def test_environment_overrides(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": "/srv/set", "autoMemoryEnabled": False})
    base = {"CLAUDE_CONFIG_DIR": str(cfg)}

    def where(**extra: str) -> tuple[Path | None, bool]:
        loc = locate_memory_dir(
            tmp_path, env={**base, **extra}, home=tmp_path, policy_paths=NO_POLICY
        )
        return loc.memory_dir, loc.enabled

    assert where() == (Path("/srv/set"), False)
    # A named memory dir outranks every setting; 0/false/no/off forces memory on.
    assert where(CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="/srv/cowork") == (Path("/srv/cowork"), False)
    # ... but it is not ~-expanded, and a refused one leaves the settings to decide.
    assert where(CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="~/cowork") == (Path("/srv/set"), False)
    assert where(CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="/a") == (Path("/srv/set"), False)
    assert where(CLAUDE_CODE_DISABLE_AUTO_MEMORY="0")[1] is True
    assert where(CLAUDE_CODE_DISABLE_AUTO_MEMORY="off")[1] is True
    _json(cfg / "settings.json", {})
    remote = tmp_path / "remote"
    slug = slugify(canonical_git_root(tmp_path))
    assert where(CLAUDE_CODE_REMOTE_MEMORY_DIR=str(remote)) == (
        remote / "projects" / slug / "memory",
        True,
    )


@pytest.mark.parametrize(
    ("env", "enabled"),
    [
        ({}, True),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "on"}, False),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": " TRUE "}, False),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "2"}, True),
        ({"CLAUDE_CODE_SIMPLE": "1"}, False),
        ({"CLAUDE_CODE_SIMPLE": "0"}, True),
        # Bare mode has no memory at all, whatever the disable switch says.
        ({"CLAUDE_CODE_SIMPLE": "1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}, False),
        ({"CLAUDE_CODE_SAFE_MODE": "1"}, False),
        ({"CLAUDE_CODE_SAFE_MODE": "1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}, False),
        ({"CLAUDE_CODE_SAFE_MODE": "0"}, True),
        ({"CLAUDE_CODE_REMOTE": "1"}, False),
        ({"CLAUDE_CODE_REMOTE": "false"}, True),
        ({"CLAUDE_CODE_REMOTE": "1", "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}, True),
        ({"CLAUDE_CODE_REMOTE": "1", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/srv/r"}, True),
        ({"CLAUDE_CODE_REMOTE": "1", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "/srv/c"}, True),
    ],
)
def test_environment_switches(tmp_path: Path, env: dict[str, str], enabled: bool) -> None:
    full = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), **env}
    loc = locate_memory_dir(tmp_path, env=full, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.enabled is enabled


def test_project_dir_name(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    cfg = tmp_path / "cfg"

    def where(**env: str) -> Path | None:
        return locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY).memory_dir

    default = cfg / "projects" / slugify(project) / "memory"
    assert where(CLAUDE_CONFIG_DIR=str(cfg), CLAUDE_CODE_PROJECT_DIR_NAME="my-proj_1") == (
        cfg / "projects" / "my-proj_1" / "memory"
    )
    # Only with CLAUDE_CONFIG_DIR set, a valid name, and not under a remote memory root.
    assert where(CLAUDE_CODE_PROJECT_DIR_NAME="my-proj_1") == (
        tmp_path / ".claude" / "projects" / slugify(project) / "memory"
    )
    for bad in ("bad/name", "nul", "COM1", "x" * 65):
        assert where(CLAUDE_CONFIG_DIR=str(cfg), CLAUDE_CODE_PROJECT_DIR_NAME=bad) == default
    remote = tmp_path / "rmem"
    assert where(
        CLAUDE_CONFIG_DIR=str(cfg),
        CLAUDE_CODE_PROJECT_DIR_NAME="named",
        CLAUDE_CODE_REMOTE_MEMORY_DIR=str(remote),
    ) == (remote / "projects" / slugify(project) / "memory")


def test_the_highest_precedence_switch_wins(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryEnabled": False})
    project = tmp_path / "p"
    _json(project / ".claude" / "settings.local.json", {"autoMemoryEnabled": True})
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    assert locate_memory_dir(project, env=env, policy_paths=NO_POLICY).enabled
    _json(project / ".claude" / "settings.local.json", {})
    _json(project / ".claude" / "settings.json", {"autoMemoryEnabled": True})
    assert locate_memory_dir(project, env=env, policy_paths=NO_POLICY).enabled
    assert not locate_memory_dir(project, env=env, policy_paths=NO_POLICY, target=SEED).enabled


def test_relative_override_ignored_and_bad_json_noted(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": "relative/dir"})
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").write_text("{not json")
    loc = locate_memory_dir(
        project, env={"CLAUDE_CONFIG_DIR": str(cfg)}, home=tmp_path, policy_paths=NO_POLICY
    )
    assert loc.source == "derived"
    assert any("only an absolute path" in n for n in loc.notes)
    assert any("invalid JSON" in n for n in loc.notes)


def test_disabled_by_env_or_setting(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(cfg), "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
    assert not locate_memory_dir(tmp_path, env=env, home=tmp_path, policy_paths=NO_POLICY).enabled
    (cfg / "settings.json").write_text('{"autoMemoryEnabled": false}')
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    loc = locate_memory_dir(tmp_path, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert not loc.enabled
    assert loc.memory_dir is not None


def test_no_tilde_of_the_developer_leaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/nonexistent-real-home")
    cfg = tmp_path / "cfg"
    _json(cfg / "settings.json", {"autoMemoryDirectory": "~/mem"})
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    loc = locate_memory_dir(tmp_path, env=env, home=tmp_path / "h", policy_paths=NO_POLICY)
    assert loc.memory_dir == tmp_path / "h" / "mem"
    loc = locate_memory_dir(tmp_path, env={"CLAUDE_CONFIG_DIR": "~/c"}, home=tmp_path / "h")
    assert "nonexistent-real-home" not in str(loc.memory_dir)


def test_where_takes_the_target_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memdir.faces.cli import main

    project, env, _ = _long_project(tmp_path)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", env["CLAUDE_CONFIG_DIR"])
    sources = {}
    for target in ("claude-code-2.1.328", "seed"):
        assert main(["where", str(project), "--json", "--target", target]) == 0
        sources[target] = json.loads(capsys.readouterr().out)["source"]
    assert sources == {"claude-code-2.1.328": "derived:hash", "seed": "derived:prefix"}
