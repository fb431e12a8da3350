"""ARCHITECTURE.md stays true: it names every module of memdir and memdir_lsp and no module that
does not exist, and the core's layers it draws are the ones `lint-imports` checks."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "ARCHITECTURE.md"
PACKAGES = {"memdir": ROOT / "memory" / "memdir", "memdir_lsp": ROOT / "server" / "memdir_lsp"}
#: The heading of each package's section in ARCHITECTURE.md.
SECTIONS = {"memdir": "## memdir: the core", "memdir_lsp": "## memdir_lsp: the language server"}


def section(name: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTIONS[name])
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def modules_on_disk(package: str) -> set[str]:
    """Every module and subpackage, relative to the package (``agent.index``, ``agent``)."""
    root = PACKAGES[package]
    found: set[str] = set()
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts:  # the package itself is the section, not a row
            found.add(".".join(parts))
    return found


def modules_in_doc(package: str) -> set[str]:
    """The names in the first column of the section's module tables (``| module | ... |``)."""
    named: set[str] = set()
    in_table = False
    for line in section(package).splitlines():
        if line.startswith("| module |"):
            in_table = True
        elif not line.startswith("|"):
            in_table = False
        elif in_table and not line.startswith("|---"):
            first = line.split("|")[1]
            named.update(re.findall(r"`([^`]+)`", first))
    return named


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_module_is_named_and_every_name_is_a_module(package: str) -> None:
    on_disk, in_doc = modules_on_disk(package), modules_in_doc(package)
    assert on_disk, f"no modules found under {PACKAGES[package]}"
    assert sorted(on_disk - in_doc) == [], f"{package} modules ARCHITECTURE.md does not name"
    assert sorted(in_doc - on_disk) == [], (
        f"ARCHITECTURE.md names {package} modules that do not exist"
    )


def layers_in_doc() -> list[str]:
    """The first fenced block of the core's section: one layer a line, top first, each followed
    by its description after two or more spaces."""
    block = re.search(r"```\n(.*?)```", section("memdir"), re.DOTALL)
    assert block is not None, "the core's section draws no layers"
    return [re.split(r"\s{2,}", line.strip())[0] for line in block.group(1).splitlines()]


def layers_contract() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    [layers] = [c for c in contracts if c["type"] == "layers" and c.get("containers") == ["memdir"]]
    return [str(layer) for layer in layers["layers"]]


def test_the_layers_drawn_are_the_layers_checked() -> None:
    assert layers_in_doc() == layers_contract()
