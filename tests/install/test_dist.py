"""What scripts/build-dist.sh builds: the files and metadata a user's installer sees."""

from __future__ import annotations

import email
import tarfile
import zipfile

import pytest
from conftest import Dist

pytestmark = [pytest.mark.slow, pytest.mark.install]


def test_the_wheel_carries_the_license_the_description_and_both_commands(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = wheel.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(wheel.read(f"{info}/METADATA"))
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert f"{info}/licenses/LICENSE" in names
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    # The package description, not the developer README (which opens with the test command).
    assert metadata.get_payload().startswith("# memdir\n")
    assert "scripts/test.sh" not in metadata.get_payload()
    assert "memdir = memdir.faces.cli:main" in entry_points
    assert "memdir-lsp = memdir_lsp.__main__:main" in entry_points
    assert {n.split("/")[0] for n in names} == {"memdir", "memdir_lsp", info}


def test_the_core_requires_no_sdk_and_each_extra_names_its_own(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as wheel:
        info = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(wheel.read(info))
    requires = metadata.get_all("Requires-Dist") or []
    core = {r.split(";")[0].split("<")[0].split(">")[0].lower() for r in requires if ";" not in r}
    assert core == {
        "python-frontmatter", "pyyaml", "pygls", "lsprotocol", "attrs", "cattrs", "pystemmer",
        "filelock",
    }  # fmt: skip
    assert "anthropic<3,>=2.16; extra == 'anthropic'" in requires
    assert "mcp<3,>=2.3; extra == 'mcp'" in requires
    # The MCP server's memory tool is memdir's own: the mcp extra does not pull the anthropic SDK.
    assert [r for r in requires if r.endswith("extra == 'mcp'")] == ["mcp<3,>=2.3; extra == 'mcp'"]
    # Every runtime dependency has an upper bound on its major.
    assert all("<" in r for r in requires if ";" not in r)


def test_the_sdist_builds_the_wheel_and_carries_the_license(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    expected = {"LICENSE", "pyproject.toml", "docs/pypi.md", "README.md", ".pre-commit-hooks.yaml"}
    assert names >= expected
    assert "memory/memdir/__init__.py" in names and "server/memdir_lsp/__main__.py" in names
    assert not any(name.startswith(("client-vscode/", "benchmarks/")) for name in names)
