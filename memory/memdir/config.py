"""Settings: one typed object, the same keys from ``memdir.toml``, ``pyproject.toml`` and editors.

Sources, first found wins: ``memdir.toml`` in the memory dir, then a ``[tool.memdir]`` table in
the nearest ``pyproject.toml`` above the memory dir or in the project root. Editors send the same
keys (camelCase accepted) through the language server. Invalid values never crash anything: they
are dropped with a message and the default stays.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from memdir import constants as C
from memdir.target import DEFAULT_TARGET, TARGETS, Target, get_target

#: How much a finding matters: LSP's four levels, most severe first.
Severity = Literal["error", "warning", "info", "hint"]
#: What a setting may make of a rule's severity: one of the four, or ``off``.
SeveritySetting = Severity | Literal["off"]
SEVERITIES: tuple[str, ...] = ("error", "warning", "info", "hint", "off")
RecallMode = Literal["index", "prefetch"]
#: Which recall selector runs: ``auto`` is the Anthropic model with a key, else a configured
#: local model, else the lexical one (:func:`memdir.recall.choice.choose_selector`).
SelectorName = Literal["auto", "anthropic", "openai-compatible", "lexical"]
SELECTOR_NAMES: tuple[SelectorName, ...] = ("auto", "anthropic", "openai-compatible", "lexical")
#: Ollama's OpenAI-compatible endpoint: the most common local model server.
DEFAULT_OPENAI_BASE_URL = "http://127.0.0.1:11434/v1"
#: Long enough for a loaded local model to answer a short JSON list, short enough for a prompt
#: hook; a model that must first be loaded from disk needs more (``openai_timeout``).
DEFAULT_OPENAI_TIMEOUT = 5.0
#: A base URL off this machine comes from here (or ``--base-url``), never from a settings file.
OPENAI_BASE_URL_ENV = "MEMDIR_OPENAI_BASE_URL"

CONFIG_FILENAME = "memdir.toml"
_CODE = re.compile(r"^MEM\d{3}$")


@dataclass(frozen=True)
class Settings:
    #: Index lines longer than this are flagged (MEM001).
    index_line_limit: int = C.INDEX_LINE_LIMIT
    #: Per-code severity overrides, e.g. ``{"MEM107": "info", "MEM109": "off"}``.
    severity: Mapping[str, SeveritySetting] = field(default_factory=dict)
    #: Only these codes (empty: all) ...
    select: tuple[str, ...] = ()
    #: ... minus these.
    ignore: tuple[str, ...] = ()
    #: ``index``: MEMORY.md is injected (path A); ``prefetch``: path B, the index may be skipped.
    recall_mode: RecallMode = "index"
    selector: SelectorName = "auto"
    model: str = C.DEFAULT_SELECTOR_MODEL
    #: The ``openai-compatible`` selector's server (``.../v1``), model and timeout in seconds;
    #: without a model that selector cannot run, and ``auto`` does not consider it.
    openai_base_url: str = DEFAULT_OPENAI_BASE_URL
    openai_model: str | None = None
    openai_timeout: float = DEFAULT_OPENAI_TIMEOUT
    trigger: Literal["multilingual", "claude-code"] = "multilingual"
    #: Days after which a memory not verified since (``last_verified``, else its modified date)
    #: is reported (MEM120); 0 turns the check off.
    verify_after_days: int = 180
    #: Run the preview rules too: rules not yet right often enough on real memory dirs to be
    #: on by default (each rule's page gives its measured precision). As in ruff, selecting a
    #: preview code without this does not run it.
    preview: bool = False
    #: Which agent behaviour to reproduce: ``claude-code-<version>`` or ``seed`` (the spec).
    target: str = DEFAULT_TARGET.name
    #: Check and write the directory as Claude Code's even when it looks like another agent's
    #: memory (``memdir.agent.formats``), which memdir otherwise leaves alone; and check it as
    #: auto memory, with every rule, when the project's instructions name it
    #: (``memdir.agent.instructions``).
    any_format: bool = False
    #: Where these settings came from (for messages), and what was wrong with them.
    source: str | None = None
    errors: tuple[str, ...] = ()
    #: Set when the configuration file exists but cannot be read or parsed (the defaults are
    #: used then); a command line treats that as a usage error, an editor as a warning.
    load_error: str | None = None

    @property
    def agent_target(self) -> Target:
        return get_target(self.target)

    def code_enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        if any(code.startswith(i) for i in self.ignore):
            return False
        return self.severity.get(code) != "off"


_ALIASES = {
    "indexLineLimit": "index_line_limit",
    "lineLimit": "index_line_limit",
    "line_limit": "index_line_limit",
    "recallMode": "recall_mode",
    "severities": "severity",
    "openaiBaseUrl": "openai_base_url",
    "openaiModel": "openai_model",
    "openaiTimeout": "openai_timeout",
    "verifyAfterDays": "verify_after_days",
    "anyFormat": "any_format",
}


#: Values are quoted in messages up to this many characters: a settings file can hold anything.
_SHOWN_CHARS = 60
#: Problems reported of one settings source; the rest are counted.
MAX_SETTING_ERRORS = 20


def _shown(value: object) -> str:
    """``value`` quoted for a message (``repr``: control characters escaped), cut short."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _name(key: object) -> str:
    """A setting's name for a message: as written when plain, else quoted like a value (a key
    of a hostile file may hold terminal escapes)."""
    text = str(key)
    plain = text.isprintable() and len(text) <= _SHOWN_CHARS
    return text if plain else _shown(key)


def _codes(value: Any, key: str, errors: list[str]) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        errors.append(f"`{key}` must be a list of codes like MEM001")
        return ()
    codes: list[str] = []
    for item in items:
        code = str(item).strip().upper()
        if not code:
            continue
        if not re.fullmatch(r"MEM\d{0,3}", code):
            errors.append(
                f"`{key}`: {_shown(item)} is not a memdir code (MEM001 ... MEM111 or a prefix)"
            )
            continue
        codes.append(code)
    return tuple(codes)


#: Never in a base URL: user info (``@``), a backslash, whitespace or a control character. URL
#: parsers disagree on where the host of such a URL is (``http://x.example\\@127.0.0.1``: the
#: check's parser sees 127.0.0.1, urllib connects to the whole name), so none is accepted.
_AMBIGUOUS_URL = re.compile(r"[\x00-\x20\x7f\\@]")


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is this machine (``localhost`` or a loopback address), as every
    URL parser sees it (see :data:`_AMBIGUOUS_URL`)."""
    import ipaddress
    from urllib.parse import urlsplit

    if _AMBIGUOUS_URL.search(url.strip()):
        return False
    host = urlsplit(url.strip()).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def base_url_error(value: object, *, remote: bool = True) -> str | None:
    """What is wrong with an OpenAI-compatible base URL, or None when it is usable.

    ``remote=False`` (settings files and editors): only this machine. A cloned repository can
    supply the settings, and the selector sends the user's messages to the base URL.
    """
    from urllib.parse import urlsplit

    if not isinstance(value, str) or not value.strip():
        return "must be a URL like http://127.0.0.1:11434/v1"
    if _AMBIGUOUS_URL.search(value.strip()):
        return (
            "must name the server alone: no user name or password (@), backslash, space or "
            f"control character, got {_shown(value)}"
        )
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"must be an http:// or https:// URL with a host, got {_shown(value)}"
    if parts.query or parts.fragment:
        return f"must not have a query or fragment, got {_shown(value)}"
    try:
        parts.port  # noqa: B018 - only to see whether it parses
    except ValueError:
        return f"has a bad port, got {_shown(value)}"
    if not remote and not is_loopback_url(value):
        return (
            f"must be on this machine (localhost, 127.0.0.1, ::1), got {_shown(value)}: set "
            f"{OPENAI_BASE_URL_ENV} or pass --base-url for a server elsewhere"
        )
    return None


def settings_from_mapping(
    data: Mapping[str, Any], base: Settings | None = None, source: str | None = None
) -> Settings:
    """Build settings from a plain mapping (TOML table or editor JSON); bad values are reported."""
    base = base or Settings()
    errors: list[str] = list(base.errors)
    changes: dict[str, Any] = {}
    known = {f.name for f in fields(Settings)} - {"source", "errors", "load_error"}
    for raw_key, value in data.items():
        key = _ALIASES.get(raw_key, raw_key)
        if key not in known:
            errors.append(f"unknown setting `{_name(raw_key)}`")
            continue
        if key == "index_line_limit":
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                changes[key] = value
            else:
                errors.append(f"`{raw_key}` must be a positive integer, got {_shown(value)}")
        elif key == "verify_after_days":
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                changes[key] = value
            else:
                errors.append(
                    f"`{raw_key}` must be a whole number of days (0: off), got {_shown(value)}"
                )
        elif key == "preview":
            if isinstance(value, bool):
                changes[key] = value
            else:
                errors.append(f"`{raw_key}` must be true or false, got {_shown(value)}")
        elif key == "severity":
            if not isinstance(value, Mapping):
                errors.append(f"`{raw_key}` must be a table of CODE = severity")
                continue
            merged: dict[str, SeveritySetting] = dict(base.severity)
            for code, level in value.items():
                code_text = str(code).upper()
                if not _CODE.fullmatch(code_text):
                    errors.append(f"`{raw_key}`: {_shown(code)} is not a code like MEM001")
                elif level not in SEVERITIES:
                    errors.append(f"`{raw_key}.{code}` must be one of {', '.join(SEVERITIES)}")
                else:
                    merged[code_text] = level
            changes[key] = merged
        elif key in ("select", "ignore"):
            changes[key] = _codes(value, raw_key, errors)
        elif key == "recall_mode":
            if value in ("index", "prefetch"):
                changes[key] = value
            else:
                errors.append(f"`{raw_key}` must be index or prefetch, got {_shown(value)}")
        elif key == "selector":
            if value in SELECTOR_NAMES:
                changes[key] = value
            else:
                names = ", ".join(SELECTOR_NAMES)
                errors.append(f"`selector` must be one of {names}, got {_shown(value)}")
        elif key == "openai_base_url":
            url = base_url_error(value, remote=False)
            if url is None:
                changes[key] = str(value).strip().rstrip("/")
            else:
                errors.append(f"`{raw_key}` {url}")
        elif key == "openai_model":
            if isinstance(value, str) and value.strip():
                changes[key] = value.strip()
            else:
                errors.append(f"`{raw_key}` must be the model name the server knows")
        elif key == "openai_timeout":
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                changes[key] = float(value)
            else:
                errors.append(
                    f"`{raw_key}` must be a positive number of seconds, got {_shown(value)}"
                )
        elif key == "model":
            if isinstance(value, str) and value.strip():
                changes[key] = value.strip()
            else:
                errors.append("`model` must be a model name")
        elif key == "trigger":
            if value in ("multilingual", "claude-code"):
                changes[key] = value
            else:
                errors.append(f"`trigger` must be multilingual or claude-code, got {_shown(value)}")
        elif key == "any_format":
            if isinstance(value, bool):
                changes[key] = value
            else:
                errors.append(f"`{raw_key}` must be true or false, got {_shown(value)}")
        elif key == "target":
            if isinstance(value, str) and value in TARGETS:
                changes[key] = value
            else:
                names = ", ".join(sorted(TARGETS))
                errors.append(f"`target` must be one of {names}, got {_shown(value)}")
    if len(errors) > MAX_SETTING_ERRORS:
        more = len(errors) - MAX_SETTING_ERRORS
        errors = [*errors[:MAX_SETTING_ERRORS], f"… and {more} more problems with these settings"]
    return replace(base, **changes, source=source or base.source, errors=tuple(errors))


#: A settings file larger than this is refused, not parsed: real ones are a few hundred bytes.
MAX_CONFIG_BYTES = 256 * 1024


def _read_toml(path: Path, root: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The TOML file ``path`` parsed (None when there is none), or what is wrong with it.

    Read as every file a memory dir or project supplies is (:mod:`memdir.textio`): a regular
    file only (a FIFO or device is never opened for good), at most :data:`MAX_CONFIG_BYTES`,
    and not through a symlink that leads out of ``root`` (the memory dir, or the project).
    Nesting too deep for the parser is an error like any other, never a crash."""
    from memdir.containment import relative_inside
    from memdir.textio import read_bytes

    try:
        if relative_inside(root, path) is None:
            os.lstat(path)  # a missing file is no file, not a refused link
            return None, f"{path}: a symlink leading outside {root}: not read"
        raw = read_bytes(path, MAX_CONFIG_BYTES, truncate=False)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    # Imported only when a file exists: most memory dirs have none, and the parser costs a
    # few milliseconds of every `memdir lint` start.
    import tomllib

    try:
        return tomllib.loads(raw.decode("utf-8")), None
    except UnicodeDecodeError as exc:
        return None, f"{path}: not UTF-8 (byte {exc.start})"
    except RecursionError:
        return None, f"{path}: nested too deeply to parse"
    except tomllib.TOMLDecodeError as exc:
        return None, f"{path}: {exc}"


def load_settings(memory_dir: Path, project_root: Path | None = None) -> Settings:
    """Settings for a memory dir, from the first configuration file found."""
    own = memory_dir / CONFIG_FILENAME
    data, error = _read_toml(own, memory_dir)
    if error:
        return Settings(source=str(own), errors=(error,), load_error=error)
    if data is not None:
        return settings_from_mapping(data, source=str(own))
    # The nearest pyproject.toml above the memory dir is its project's; look no further up.
    nearest = next(
        (
            d / "pyproject.toml"
            for d in (memory_dir, *memory_dir.parents)
            if (d / "pyproject.toml").is_file()
        ),
        None,
    )
    # A pyproject.toml that is no regular file (a FIFO, a device, a folder) is not one.
    rooted = project_root / "pyproject.toml" if project_root is not None else None
    candidates = [p for p in (nearest, rooted) if p is not None and p.is_file()]
    for pyproject in dict.fromkeys(candidates):
        # A link may lead anywhere inside the project (a shared pyproject), never out of it.
        root = pyproject.parent
        if project_root is not None and root.is_relative_to(project_root):
            root = project_root
        data, error = _read_toml(pyproject, root)
        if error:
            return Settings(source=str(pyproject), errors=(error,), load_error=error)
        tool = (data or {}).get("tool")
        table = tool.get("memdir") if isinstance(tool, dict) else None
        if isinstance(table, dict):
            return settings_from_mapping(table, source=f"{pyproject} [tool.memdir]")
    return Settings()
