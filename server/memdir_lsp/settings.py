"""Editor settings: the ``memdir`` section, same keys as ``memdir.toml`` plus ``directories``.

Sources, later wins: ``initializationOptions`` (at start), then ``workspace/configuration``
(pulled after ``initialized`` when the client supports it, and again on every
``workspace/didChangeConfiguration``). The settings of one memory directory are its own
``memdir.toml`` (or ``[tool.memdir]``) overlaid with the editor's keys: what a user sets in the
editor is the most specific choice. Invalid values are dropped with a ``window/logMessage`` and
the defaults stay; a bad setting never stops the server.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from memdir.config import Settings, load_settings, settings_from_mapping
from pygls.capabilities import get_capability

from memdir_lsp.protocol import CONFIG_SECTION, TRUSTED_OPTION
from memdir_lsp.server import MemoryServer

logger = logging.getLogger(__name__)

#: Keys the server adds to memdir.toml's: where to look for memory directories, and when to
#: re-check after a keystroke (``diagnostics.debounce``).
SERVER_KEYS = ("directories", "diagnostics", "diagnostics.debounce", TRUSTED_OPTION)
#: Milliseconds after the last keystroke before a pushed re-check (pulls never wait): short,
#: since an edit's re-check is incremental; 0 re-checks at every change.
DEFAULT_DEBOUNCE_MS = 150
#: Longer waits are a mistake (minutes without findings), not a preference.
MAX_DEBOUNCE_MS = 10_000
#: Keys of the same section that belong to the editor extension (how to start the server,
#: protocol tracing): not ours to validate.
CLIENT_KEYS = ("server", "trace")


@dataclass(frozen=True)
class EditorSettings:
    #: Extra memory directories: absolute, ``~/``, or relative to each workspace folder.
    directories: tuple[str, ...] = ()
    #: Valid memdir.toml keys as the editor sent them (camelCase accepted).
    overrides: Mapping[str, Any] = field(default_factory=dict)
    #: ``diagnostics.debounce``: milliseconds from the last keystroke to a pushed re-check.
    debounce_ms: int = DEFAULT_DEBOUNCE_MS

    def for_directory(self, root: Path) -> Settings:
        """A directory's own configuration file overlaid with the editor's keys."""
        base = load_settings(root)
        if not self.overrides:
            return base
        return settings_from_mapping(self.overrides, base=base, source="editor settings")


def parse_editor_settings(data: object) -> tuple[EditorSettings, list[str]]:
    """One converter for every source; returns the settings and what was wrong with the input."""
    if data is None:
        return EditorSettings(), []
    if not isinstance(data, Mapping):
        return EditorSettings(), [f"`{CONFIG_SECTION}` settings must be an object, got {data!r}"]
    nested = data.get(CONFIG_SECTION)
    if isinstance(nested, Mapping) and len(data) == 1:
        # initializationOptions may wrap the section: {"memdir": {...}}.
        data = nested
    errors: list[str] = []
    directories: tuple[str, ...] = ()
    raw_dirs = data.get("directories")
    if raw_dirs is not None:
        if isinstance(raw_dirs, str):
            raw_dirs = [raw_dirs]
        if isinstance(raw_dirs, list) and all(isinstance(d, str) for d in raw_dirs):
            directories = tuple(d for d in raw_dirs if d.strip())
        else:
            errors.append(f"`directories` must be a list of paths, got {raw_dirs!r}")
    debounce_ms, problem = _debounce(data)
    if problem is not None:
        errors.append(problem)
    overrides: dict[str, Any] = {}
    for key, value in data.items():
        if key in SERVER_KEYS or key in CLIENT_KEYS:
            continue
        checked = settings_from_mapping({key: value})
        if checked.errors:
            errors.extend(checked.errors)
        else:
            overrides[key] = value
    return EditorSettings(directories, overrides, debounce_ms), errors


def _debounce(data: Mapping[str, Any]) -> tuple[int, str | None]:
    """``diagnostics.debounce`` (whole milliseconds, 0 to MAX_DEBOUNCE_MS) or the default; as
    the dotted key (what VS Code's client sends) or nested (``{"diagnostics": {...}}``)."""
    value = data.get("diagnostics.debounce")
    nested = data.get("diagnostics")
    if value is None and nested is not None:
        if not isinstance(nested, Mapping):
            return DEFAULT_DEBOUNCE_MS, f"`diagnostics` must be an object, got {nested!r}"
        value = nested.get("debounce")
    if value is None:
        return DEFAULT_DEBOUNCE_MS, None
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0 <= value <= MAX_DEBOUNCE_MS
        and value == int(value)
    ):
        return int(value), None
    return DEFAULT_DEBOUNCE_MS, (
        f"`diagnostics.debounce` must be whole milliseconds from 0 to {MAX_DEBOUNCE_MS}, "
        f"got {value!r}"
    )


def _take_trust(options: object) -> tuple[list[object], object]:
    """The ``trusted`` values of ``options`` (at the top level and in the ``memdir`` section)
    and the options without them."""
    if not isinstance(options, Mapping):
        return [], options
    rest = dict(options)
    values = [rest.pop(TRUSTED_OPTION)] if TRUSTED_OPTION in rest else []
    nested = rest.get(CONFIG_SECTION)
    if isinstance(nested, Mapping) and TRUSTED_OPTION in nested:
        section = dict(nested)
        values.append(section.pop(TRUSTED_OPTION))
        rest[CONFIG_SECTION] = section
    return values, rest


def split_trust(options: object) -> tuple[bool, object, str | None]:
    """The workspace trust that ``initializationOptions`` declare (trusted when they say
    nothing), the options without it, and what was wrong with it. Anything but ``true`` is
    untrusted: a mistake must not open up."""
    values, rest = _take_trust(options)
    wrong = [v for v in values if not isinstance(v, bool)]
    problem = (
        f"`{TRUSTED_OPTION}` must be true or false, got {wrong[0]!r}; taken as false"
        if wrong
        else None
    )
    return all(v is True for v in values), rest, problem


def apply_settings(server: MemoryServer, data: object, source: str) -> bool:
    """Adopt settings from ``source``; report problems to the client. True when they changed."""
    if source != "initializationOptions" and _take_trust(data)[0]:
        # Settings may come from the workspace itself (a project's config file): they must
        # not raise the trust the client declared.
        server.log(
            f"{source}: `{TRUSTED_OPTION}` is read from initializationOptions only; ignored",
            types.MessageType.Warning,
        )
    settings, errors = parse_editor_settings(data)
    for error in errors:
        server.log(f"{source}: {error}; using the default", types.MessageType.Warning)
    changed = settings != server.editor_settings
    server.editor_settings = settings
    return changed


async def pull_configuration(server: MemoryServer) -> bool:
    """Ask the client for the ``memdir`` section, when it can answer. True when it changed."""
    if not get_capability(server.client_capabilities, "workspace.configuration", False):
        return False
    try:
        result = await server.workspace_configuration_async(
            types.ConfigurationParams(
                items=[types.ConfigurationItem(section=CONFIG_SECTION, scope_uri=None)]
            )
        )
    except Exception as exc:  # the client may not implement it despite the capability
        logger.warning("workspace/configuration failed: %s", exc)
        return False
    value = result[0] if result else None
    if value is None:
        return False
    return apply_settings(server, value, "workspace/configuration")


async def _register_configuration_changes(server: MemoryServer) -> None:
    """VS Code only sends didChangeConfiguration once it is registered for (or synchronized)."""
    if not get_capability(
        server.client_capabilities, "workspace.did_change_configuration.dynamic_registration", False
    ):
        return
    try:
        await server.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=str(uuid.uuid4()),
                        method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                        register_options=types.DidChangeConfigurationRegistrationOptions(
                            section=CONFIG_SECTION
                        ),
                    )
                ]
            )
        )
    except Exception as exc:
        logger.warning("could not register for configuration changes: %s", exc)


async def on_initialize(server: MemoryServer, params: types.InitializeParams) -> None:
    trusted, options, problem = split_trust(params.initialization_options)
    server.trusted = trusted
    if problem is not None:
        server.log(f"initializationOptions: {problem}", types.MessageType.Warning)
    if not trusted:
        server.log("untrusted workspace: memdir-lsp runs no git and writes nothing")
    if options is not None:
        apply_settings(server, options, "initializationOptions")


async def on_initialized(server: MemoryServer) -> None:
    await pull_configuration(server)
    await _register_configuration_changes(server)


async def did_change_configuration(
    ls: MemoryServer, params: types.DidChangeConfigurationParams
) -> None:
    settings = params.settings
    if isinstance(settings, Mapping) and isinstance(settings.get(CONFIG_SECTION), Mapping):
        # Push-style clients send the new values: no round trip needed.
        changed = apply_settings(ls, settings[CONFIG_SECTION], "didChangeConfiguration")
    else:
        changed = await pull_configuration(ls)
    if changed:
        await ls.settings_changed()


def register(server: MemoryServer) -> None:
    server.hooks.initialize.append(on_initialize)
    server.hooks.initialized.append(on_initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(server.guard(did_change_configuration))
