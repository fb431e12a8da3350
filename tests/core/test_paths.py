from __future__ import annotations

import json
from pathlib import Path

import pytest
from memdir.paths import canonical_git_root, config_root, locate_memory_dir, slug_prefix, slugify
from memdir.target import SEED

NO_POLICY: tuple[str, ...] = ()


def test_config_root_prefers_env(tmp_path: Path) -> None:
    assert config_root({"CLAUDE_CONFIG_DIR": str(tmp_path)}, home=Path("/h")) == tmp_path
    assert config_root({}, home=Path("/h")) == Path("/h/.claude")


def test_slug_replaces_every_non_ascii_alnum() -> None:
    assert slugify("/home/ana/src/app") == "-home-ana-src-app"
    assert slugify("/tmp/my_proj.v2/数据") == "-tmp-my-proj-v2---"
    assert slugify("/a b/c-d") == "-a-b-c-d"


def test_slug_prefix_only_for_long_slugs() -> None:
    assert slug_prefix("-" + "a" * 199) is None
    long = "-" + "a" * 250
    assert slug_prefix(long) == long[:200]


def test_git_root_of_plain_repo_and_no_repo(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    assert canonical_git_root(repo / "src" / "pkg") == repo.resolve()
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    assert canonical_git_root(plain) == plain.resolve()


def _worktree(main: Path, wt: Path, name: str) -> None:
    gitdir = main / ".git" / "worktrees" / name
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    (gitdir / "gitdir").write_text(str(wt / ".git") + "\n")
    wt.mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {gitdir}\n")


def test_worktree_resolves_to_main_repository(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    _worktree(main, tmp_path / "feature-wt", "feature-wt")
    (tmp_path / "feature-wt" / "deep").mkdir()
    assert canonical_git_root(tmp_path / "feature-wt" / "deep") == main.resolve()


def test_worktree_with_relative_gitdir(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    assert canonical_git_root(wt) == main.resolve()


def test_worktree_of_bare_repo_uses_common_dir(tmp_path: Path) -> None:
    bare = tmp_path / "project.git"
    gitdir = bare / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {gitdir}\n")
    assert canonical_git_root(wt) == bare.resolve()


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
    _worktree(main, tmp_path / "wt", "wt")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    a = locate_memory_dir(main, env=env, home=tmp_path, policy_paths=NO_POLICY)
    b = locate_memory_dir(tmp_path / "wt", env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert a.memory_dir == b.memory_dir
    assert a.memory_dir == tmp_path / "cfg" / "projects" / slugify(main.resolve()) / "memory"
    assert a.source == "derived"


def test_long_path_found_by_prefix_never_by_hash(tmp_path: Path) -> None:
    project = tmp_path / ("x" * 120) / ("y" * 120)
    project.mkdir(parents=True)
    cfg = tmp_path / "cfg"
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    missing = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    slug = slugify(project.resolve())
    assert len(slug) > 200
    assert missing.memory_dir is None
    assert missing.prefix_pattern == slug[:200] + "-*"
    assert "runtime-specific hash" in missing.notes[-1]
    agent_dir = cfg / "projects" / f"{slug[:200]}-1a2b3c"
    (agent_dir / "memory").mkdir(parents=True)
    found = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert found.memory_dir == agent_dir / "memory"
    assert found.source == "derived:prefix"


def test_auto_memory_directory_from_user_and_local_settings(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    (cfg / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~/mem-user"}))
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == tmp_path / "mem-user"
    assert loc.source == "setting:user"
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"autoMemoryDirectory": str(tmp_path / "mem-local")}))
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == tmp_path / "mem-local"
    assert loc.source == "setting:local"


def test_policy_settings_win(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    policy = tmp_path / "managed-settings.json"
    policy.write_text(json.dumps({"autoMemoryDirectory": "/srv/memory"}))
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~/mine"}))
    loc = locate_memory_dir(
        project, env={"CLAUDE_CONFIG_DIR": str(cfg)}, home=tmp_path, policy_paths=(str(policy),)
    )
    assert loc.memory_dir == Path("/srv/memory")
    assert loc.source == "setting:policy"


def test_shared_project_settings_place_memory_as_the_agent_lets_them(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"autoMemoryDirectory": "/tmp/evil"})
    )
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "/tmp/mine"}))
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    # Claude Code 2.1.328 reads it, over the user's own setting; memdir says where it came from.
    loc = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY)
    assert loc.memory_dir == Path("/tmp/evil") and loc.source == "setting:shared"
    assert any("a cloned repository can redirect memory writes" in n for n in loc.notes)
    # The spec (target "seed") distrusts it.
    seed = locate_memory_dir(project, env=env, home=tmp_path, policy_paths=NO_POLICY, target=SEED)
    assert seed.memory_dir == Path("/tmp/mine") and seed.source == "setting:user"
    assert any("shared project settings" in n for n in seed.notes)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("~/notes/mem", "HOME/notes/mem"),
        ("/srv/mem/", "/srv/mem"),
        ("/srv/cafe\u0301", "/srv/caf\u00e9"),  # NFC, as the agent normalises it
        ("~/", None),
        ("~/../escape", None),
        ("~/a/../../b", None),
        ("relative/dir", None),
        ("/", None),
    ],
)
def test_configured_dirs_the_agent_accepts(
    tmp_path: Path, value: str, expected: str | None
) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_text(json.dumps({"autoMemoryDirectory": value}))
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    loc = locate_memory_dir(tmp_path, env=env, home=tmp_path / "h", policy_paths=NO_POLICY)
    if expected is None:
        assert loc.source == "derived"
        assert any("must be an absolute path or ~/" in n for n in loc.notes)
    else:
        assert str(loc.memory_dir) == expected.replace("HOME", str(tmp_path / "h"))


def test_environment_overrides(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_text(
        json.dumps({"autoMemoryDirectory": "/srv/set", "autoMemoryEnabled": False})
    )
    base = {"CLAUDE_CONFIG_DIR": str(cfg)}

    def where(**extra: str) -> tuple[Path | None, bool]:
        loc = locate_memory_dir(tmp_path, env={**base, **extra}, policy_paths=NO_POLICY)
        return loc.memory_dir, loc.enabled

    assert where() == (Path("/srv/set"), False)
    # A named memory dir outranks every setting; 0/false/no/off forces memory on.
    assert where(CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="/srv/cowork") == (Path("/srv/cowork"), False)
    assert where(CLAUDE_CODE_DISABLE_AUTO_MEMORY="0")[1] is True
    assert where(CLAUDE_CODE_DISABLE_AUTO_MEMORY="off")[1] is True
    (cfg / "settings.json").write_text("{}")
    assert where(CLAUDE_CODE_SIMPLE="1")[1] is False
    remote = tmp_path / "remote"
    slug = slugify(canonical_git_root(tmp_path))
    assert where(CLAUDE_CODE_REMOTE_MEMORY_DIR=str(remote)) == (
        remote / "projects" / slug / "memory",
        True,
    )


def test_the_highest_precedence_switch_wins(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_text('{"autoMemoryEnabled": false}')
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").write_text('{"autoMemoryEnabled": true}')
    env = {"CLAUDE_CONFIG_DIR": str(cfg)}
    assert locate_memory_dir(project, env=env, policy_paths=NO_POLICY).enabled


def test_relative_override_ignored_and_bad_json_noted(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_text('{"autoMemoryDirectory": "relative/dir"}')
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").write_text("{not json")
    loc = locate_memory_dir(
        project, env={"CLAUDE_CONFIG_DIR": str(cfg)}, home=tmp_path, policy_paths=NO_POLICY
    )
    assert loc.source == "derived"
    assert any("must be an absolute path" in n for n in loc.notes)
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
