"""memdir's optional extras, and the one error that names a missing one.

The core install carries what lint, index, manifest, the CLI, the memory tool and the language
server need. The anthropic SDK (the anthropic selector, extraction) and the MCP SDK (``memdir
mcp``) are extras, imported only where used; every such site calls :func:`require` first, so a
user without the extra gets one line naming it and the command that adds it to *their* install
(pipx, uv tool or pip, found from the environment memdir runs in), not a ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlparse

#: Each extra and the top-level modules it provides (pyproject.toml lists their packages).
EXTRAS: Final[dict[str, tuple[str, ...]]] = {
    "anthropic": ("anthropic",),
    "mcp": ("mcp",),
}


class MissingExtraError(ImportError):
    """A feature's optional dependency is not installed; the message says which extra adds it."""

    def __init__(self, extra: str, what: str, module: str) -> None:
        self.extra = extra
        super().__init__(
            f"{what} needs memdir's [{extra}] extra (the {module} package is not installed); "
            f"{remedy(extra)}",
            name=module,
        )


def missing(extra: str) -> str | None:
    """The first module of ``extra`` that cannot be imported, or None (nothing is imported)."""
    for module in EXTRAS[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a finder refusing it; a half-imported module
            found = False
        if not found:
            return module
    return None


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``extra`` is installed.

    ``what`` names the feature for the message ("memdir mcp", "the anthropic selector").
    """
    module = missing(extra)
    if module is not None:
        raise MissingExtraError(extra, what, module)


#: What scripts/bundle-vscode-server.sh writes into the bundled memdir's ``INSTALLER``.
VSCODE_BUNDLE_INSTALLER: Final = "memdir-vscode-bundle"


def remedy(extra: str) -> str:
    """How to get ``extra``: the install command, or for the VS Code bundle, which carries the
    core only (the SDKs have compiled dependencies), the setting that leaves it."""
    if _installer() == VSCODE_BUNDLE_INSTALLER:
        return (
            f"the server bundled with the VS Code extension has only the core: install memdir "
            f"with [{extra}] in a Python environment and set memdir.importStrategy to "
            "fromEnvironment"
        )
    return f"add it with: {install_command(extra)}"


def _installer() -> str | None:
    from importlib import metadata  # only to word an error: kept off every import

    try:
        text = metadata.distribution("memdir").read_text("INSTALLER")
    except metadata.PackageNotFoundError:
        return None
    return text.strip() if text else None


def install_command(extra: str) -> str:
    """The command that reinstalls memdir with ``extra``, for the installer that installed it.

    pipx and ``uv tool`` leave a marker file in the environment they create; the source (a
    wheel, a clone, a URL) is the one the installer recorded in ``direct_url.json`` (PEP 610).
    """
    spec, editable = _requirement(extra)
    prefix = Path(sys.prefix)
    if (prefix / "pipx_metadata.json").is_file():
        return f"pipx install --force {shlex.quote(spec)}"
    if (prefix / "uv-receipt.toml").is_file():
        return f"uv tool install --force {shlex.quote(spec)}"
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    return f"{pip} {'-e ' if editable else ''}{shlex.quote(spec)}"


def _requirement(extra: str) -> tuple[str, bool]:
    """memdir with ``extra`` from where it was installed, and whether that install is editable.

    A local wheel or directory is named by its path (what users type); a URL by a PEP 508 direct
    reference; without a ``direct_url.json`` memdir came from an index, where the name suffices.
    """
    from importlib import metadata  # only to word an error: kept off every import

    by_name = f"memdir[{extra}]", False
    try:
        text = metadata.distribution("memdir").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return by_name
    if not text:
        return by_name
    try:
        record = json.loads(text)
        url = urlparse(record["url"])
    except (ValueError, KeyError, TypeError):
        return by_name
    if url.scheme == "file":
        editable = bool(record.get("dir_info", {}).get("editable"))
        return f"{unquote(url.path)}[{extra}]", editable
    vcs = record.get("vcs_info", {}).get("vcs")
    return f"memdir[{extra}] @ {vcs + '+' if vcs else ''}{record['url']}", False
