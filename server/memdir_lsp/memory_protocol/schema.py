"""The JSON Schema of every ``memory/*`` message, and what is generated from it.

``schema()`` reads the classes of ``types`` (field types, defaults, docstrings and ``#:``
comments); the TypeScript interfaces of the VS Code extension and ``docs/protocol.md`` are then
rendered from that schema alone. ``python -m memdir_lsp.memory_protocol.schema --write``
rewrites the three committed files; tests check they are up to date.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import re
import sys
import types as pytypes
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import attrs

from memdir_lsp.memory_protocol.converter import wire_name
from memdir_lsp.memory_protocol.types import METHODS

JsonSchema = dict[str, Any]

ROOT = Path(__file__).resolve().parents[3]
SCHEMA_PATH = ROOT / "server" / "memdir_lsp" / "memory_protocol" / "schema.json"
TYPESCRIPT_PATH = ROOT / "client-vscode" / "src" / "common" / "protocolTypes.ts"
DOCS_PATH = ROOT / "docs" / "protocol.md"

_PRIMITIVES: dict[Any, JsonSchema] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
}


# --- Python types → JSON Schema --------------------------------------------------------------


def _is_record(cls: Any) -> bool:
    return isinstance(cls, type) and (attrs.has(cls) or dataclasses.is_dataclass(cls))


def _fields(cls: type) -> list[tuple[str, bool]]:
    """``(name, has a default)`` of every field, in order."""
    if attrs.has(cls):
        return [(f.name, f.default is not attrs.NOTHING) for f in attrs.fields(cls)]
    missing = dataclasses.MISSING
    return [
        (f.name, f.default is not missing or f.default_factory is not missing)
        for f in dataclasses.fields(cls)
    ]


_FIELD = re.compile(r"^\s+(\w+)\s*:")


def field_docs(cls: type) -> dict[str, str]:
    """The ``#:`` comments above each field, from the class and its bases."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not _is_record(klass):
            continue
        pending: list[str] = []
        for line in inspect.getsource(klass).splitlines():
            stripped = line.strip()
            if stripped.startswith("#:"):
                pending.append(stripped[2:].strip())
                continue
            found = _FIELD.match(line)
            if found and pending:
                docs[found.group(1)] = _markdown(" ".join(pending))
            pending = []
    return docs


def _markdown(text: str) -> str:
    """Docstrings quote code reST-style (double backticks); the schema's readers use Markdown."""
    return text.replace("``", "`")


def _doc(cls: type) -> str:
    return _markdown(inspect.cleandoc(cls.__doc__ or "")) if "__doc__" in vars(cls) else ""


class SchemaBuilder:
    """Collects the ``$defs`` reached from the methods' params and results."""

    def __init__(self) -> None:
        self.defs: dict[str, JsonSchema] = {}
        #: Whether each record is sent by the server (all fields present) or by the client.
        self.sent_by_server: dict[str, bool] = {}

    def of(self, tp: Any, *, server: bool) -> JsonSchema:
        if tp in _PRIMITIVES:
            return dict(_PRIMITIVES[tp])
        origin = get_origin(tp)
        args = get_args(tp)
        if origin is Literal:
            return {"enum": list(args)}
        if origin in (Union, pytypes.UnionType):
            return {"anyOf": [self.of(a, server=server) for a in args]}
        if origin in (list, tuple, Sequence):
            return {"type": "array", "items": self.of(args[0], server=server)}
        if origin in (dict, Mapping):
            return {"type": "object", "additionalProperties": self.of(args[1], server=server)}
        if _is_record(tp):
            return {"$ref": f"#/$defs/{self.record(tp, server=server)}"}
        raise TypeError(f"no JSON Schema for {tp!r}")

    def record(self, cls: type, *, server: bool) -> str:
        name = cls.__name__
        if name in self.defs:
            if self.sent_by_server[name] != server:
                raise TypeError(f"{name} is used both in params and in results")
            return name
        self.defs[name] = {}  # placeholder: records may refer to themselves
        self.sent_by_server[name] = server
        hints = get_type_hints(cls)
        docs = field_docs(cls)
        properties: dict[str, JsonSchema] = {}
        required: list[str] = []
        for field, has_default in _fields(cls):
            wire = wire_name(cls, field)
            prop = self.of(hints[field], server=server)
            if field in docs:
                prop = {"description": docs[field], **prop}
            properties[wire] = prop
            if server or not has_default:
                required.append(wire)
        schema: JsonSchema = {"type": "object"}
        if _doc(cls):
            schema["description"] = _doc(cls)
        schema["properties"] = properties
        schema["required"] = required
        # What the server sends is exactly this; clients may send more than a server knows.
        schema["additionalProperties"] = not server
        self.defs[name] = schema
        return name


def schema() -> JsonSchema:
    """One schema of every ``memory/*`` message: ``oneOf`` its methods, types in ``$defs``."""
    builder = SchemaBuilder()
    messages = []
    for method in METHODS:
        from_server = method.kind == "server notification"
        properties: dict[str, JsonSchema] = {
            "method": {"const": method.name},
            "params": builder.of(method.params, server=from_server),
        }
        if method.result is not None:
            properties["result"] = builder.of(method.result, server=True)
        message: JsonSchema = {
            "title": method.name,
            "description": method.doc,
            "x-kind": method.kind,
            "type": "object",
            "properties": properties,
            "required": ["method", "params"],
        }
        if method.errors:
            message["x-errors"] = list(method.errors)
        if method.failures:
            message["x-failures"] = list(method.failures)
        messages.append(message)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "memdir memory/* protocol",
        "description": (
            "Every custom message between an editor and memdir-lsp: requests with their "
            "params and result, notifications with their params. Generated from "
            "server/memdir_lsp/memory_protocol/types.py; do not edit."
        ),
        "oneOf": messages,
        "$defs": dict(sorted(builder.defs.items())),
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


# --- JSON Schema → TypeScript ----------------------------------------------------------------


def ts_type(prop: JsonSchema) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "enum" in prop:
        return " | ".join(json.dumps(v).replace('"', "'") for v in prop["enum"])
    if "anyOf" in prop:
        return " | ".join(ts_type(p) for p in prop["anyOf"])
    kind = prop.get("type")
    if kind == "array":
        item = ts_type(prop["items"])
        return f"({item})[]" if " | " in item else f"{item}[]"
    if kind == "object":
        return f"Record<string, {ts_type(prop.get('additionalProperties') or {})}>"
    return {
        "string": "string",
        "integer": "number",
        "number": "number",
        "boolean": "boolean",
        "null": "null",
    }.get(str(kind), "unknown")


def _jsdoc(text: str, indent: str) -> list[str]:
    lines = text.replace("*/", "*\\/").splitlines()
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**", *(f"{indent} * {line}".rstrip() for line in lines), f"{indent} */"]


def typescript(doc: JsonSchema) -> str:
    """The payload interfaces and the method table, from the schema."""
    out = [
        "/**",
        " * The memory/* payloads, generated from the protocol's JSON Schema",
        " * (server/memdir_lsp/memory_protocol/schema.json) by",
        " * `python -m memdir_lsp.memory_protocol.schema --write`. Do not edit.",
        " */",
        "",
    ]
    for name, definition in doc["$defs"].items():
        if "description" in definition:
            out += _jsdoc(definition["description"], "")
        if not definition["properties"]:
            # An empty interface would accept anything; this accepts `{}` only.
            out += [f"export type {name} = Record<string, never>;", ""]
            continue
        out.append(f"export interface {name} {{")
        required = set(definition.get("required", ()))
        for prop_name, prop in definition["properties"].items():
            if "description" in prop:
                out += _jsdoc(prop["description"], "  ")
            optional = "" if prop_name in required else "?"
            out.append(f"  {prop_name}{optional}: {ts_type(prop)};")
        out += ["}", ""]
    groups: dict[str, list[str]] = {
        "request": ["export interface MemoryRequests {"],
        "notification": ["export interface MemoryNotifications {"],
        "server notification": ["export interface MemoryServerNotifications {"],
    }
    kinds = []
    for message in doc["oneOf"]:
        props = message["properties"]
        entry = f"  '{message['title']}': {{ params: {ts_type(props['params'])}"
        if "result" in props:
            entry += f"; result: {ts_type(props['result'])}"
        groups[message["x-kind"]].append(entry + " };")
        kinds.append(f"  '{message['title']}': '{message['x-kind']}',")
    out += _jsdoc("Requests the client sends, by method.", "")
    out += [*groups["request"], "}", ""]
    out += _jsdoc("Notifications the client sends.", "")
    out += [*groups["notification"], "}", ""]
    out += _jsdoc("Notifications the server sends.", "")
    out += [*groups["server notification"], "}", ""]
    out += _jsdoc("Every memory/* method and its kind.", "")
    out += ["export const MEMORY_METHODS = {", *kinds, "} as const;", ""]
    return "\n".join(out)


# --- JSON Schema → Markdown ------------------------------------------------------------------


def _md_type(prop: JsonSchema) -> str:
    """The TypeScript spelling, each named type linked to its section."""
    text = ts_type(prop).replace("|", "\\|")

    def link(found: re.Match[str]) -> str:
        return found[0] if found[0] == "Record" else f"[{found[0]}](#{found[0].lower()})"

    return re.sub(r"\b[A-Z]\w+\b", link, text)


def _md_fields(definition: JsonSchema) -> list[str]:
    if not definition["properties"]:
        return ["No fields: `{}` (or no params at all)."]
    required = set(definition.get("required", ()))
    rows = ["| Field | Type | Required | Description |", "|---|---|---|---|"]
    for name, prop in definition["properties"].items():
        described = str(prop.get("description", "")).replace("|", "\\|")
        yes = "yes" if name in required else "no"
        rows.append(f"| `{name}` | {_md_type(prop)} | {yes} | {described} |")
    return rows


def markdown(doc: JsonSchema) -> str:
    """``docs/protocol.md``: one section per message, then every type."""
    out = [
        "# The `memory/*` protocol",
        "",
        "<!-- Generated from server/memdir_lsp/memory_protocol/schema.json by",
        "     `python -m memdir_lsp.memory_protocol.schema --write`. Do not edit. -->",
        "",
        "Custom JSON-RPC messages between an editor (or an agent's chat panel) and memdir-lsp: "
        "the agent's view of a memory directory. Every payload is camelCase, like LSP itself. "
        "Requests about a directory take an optional `directory` (the file URI of a known "
        "memory dir; default: the workspace's first). A request whose params are missing, "
        "`null` or `[]` is treated as `{}`; unknown fields are ignored. Bad params are answered "
        "with a JSON-RPC `InvalidParams` error (-32602) naming the field. The server lists the "
        "methods it handles under `capabilities.experimental.memdir.methods`.",
        "",
        "The machine-readable form is `server/memdir_lsp/memory_protocol/schema.json` (JSON "
        "Schema 2020-12); the VS Code extension's interfaces "
        "(`client-vscode/src/common/protocolTypes.ts`) are generated from it.",
        "",
    ]
    titles = {
        "request": "Requests (client → server)",
        "notification": "Notifications (client → server)",
        "server notification": "Notifications (server → client)",
    }
    kind = None
    for message in doc["oneOf"]:
        if message["x-kind"] != kind:
            kind = message["x-kind"]
            out += [f"## {titles[kind]}", ""]
        props = message["properties"]
        out += [f"### `{message['title']}`", "", message["description"], ""]
        out.append(f"- **Params:** {_md_type(props['params'])}")
        if "result" in props:
            out.append(f"- **Result:** {_md_type(props['result'])}")
        for error in message.get("x-errors", ()):
            out.append(f"- **Error** (`InvalidParams`): {error}")
        for failure in message.get("x-failures", ()):
            out.append(f"- **Error** (`RequestFailed`): {failure}")
        out.append("")
    out += ["## Types", ""]
    for name, definition in doc["$defs"].items():
        out += [f"### {name}", ""]
        if "description" in definition:
            out += [definition["description"], ""]
        out += [*_md_fields(definition), ""]
    return "\n".join(out)


# --- files -----------------------------------------------------------------------------------


def generated() -> dict[Path, str]:
    """Every generated file and its current content."""
    doc = schema()
    return {
        SCHEMA_PATH: json.dumps(doc, indent=2, ensure_ascii=False) + "\n",
        TYPESCRIPT_PATH: typescript(doc),
        DOCS_PATH: markdown(doc),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="rewrite the generated files")
    args = parser.parse_args(argv)
    stale = []
    for path, text in generated().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.write:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
        else:
            stale.append(path)
    for path in stale:
        print(f"{path.relative_to(ROOT)} is out of date; run with --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
