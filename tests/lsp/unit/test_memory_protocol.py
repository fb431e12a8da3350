"""The memory/* protocol's types, converter and generated files, in process (no server)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from memdir.faces.projections import RecallBudget
from memdir_lsp import protocol as P
from memdir_lsp.memory_protocol import schema as S
from memdir_lsp.memory_protocol import types as T
from memdir_lsp.memory_protocol.converter import structure_params, to_wire
from pygls.exceptions import JsonRpcInvalidParams


@pytest.mark.parametrize("path", sorted(S.generated(), key=str), ids=lambda p: p.name)
def test_generated_files_are_up_to_date(path: Any) -> None:
    """schema.json, protocolTypes.ts and docs/protocol.md: run ``schema --write`` after a change."""
    assert path.read_text(encoding="utf-8") == S.generated()[path]


def test_the_schema_is_valid_and_names_every_method_once() -> None:
    doc = json.loads(S.SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(doc)
    names = [m["title"] for m in doc["oneOf"]]
    assert len(names) == len(set(names))
    declared = {v for k, v in vars(P).items() if k.startswith(("MEMORY_", "MEMDIR_"))}
    assert set(names) == declared


def test_every_method_is_documented() -> None:
    text = S.DOCS_PATH.read_text(encoding="utf-8")
    for method in T.METHODS:
        assert f"### `{method.name}`" in text
        assert method.doc in text


@pytest.mark.parametrize(
    ("cls", "params", "message"),
    [
        (T.ReadParams, {}, "`path` is required"),
        (T.ReadParams, {"path": 3}, "`path` must be a string, got an integer"),
        (T.RecallParams, {"query": "q", "sessionId": True}, "`sessionId` must be a string"),
        (T.RecallParams, {"query": "q", "recentTools": "Bash"}, "`recentTools` must be an array"),
        (T.RecallParams, {"query": "q", "recentTools": [1]}, "`recentTools` must be an array of"),
        (T.SearchParams, {"pattern": "x", "ignoreCase": 1}, "`ignoreCase` must be a boolean"),
        (T.PrefetchParams, {"query": "q"}, "`sessionId` is required"),
        (T.MemoryToolParams, {"command": "explode"}, "`command` must be one of"),
        (T.MemoryToolParams, {"command": "view", "insert_line": "3"}, "`insert_line` must be"),
        (T.ExtractParams, {"transcript": "t", "workDoneToken": []}, "`workDoneToken` must be"),
        (T.DirectoryParams, [1, 2], "params must be an object"),
        (T.DirectoryParams, "x", "params must be an object"),
    ],
)
def test_bad_params_name_the_field(cls: type, params: Any, message: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as raised:
        structure_params(params, cls)
    assert message in raised.value.message


def test_every_bad_field_is_named_at_once() -> None:
    with pytest.raises(JsonRpcInvalidParams) as raised:
        structure_params({"directory": 1}, T.PrefetchParams)
    message = raised.value.message
    assert "`directory` must be a string" in message
    assert "`query` is required" in message and "`sessionId` is required" in message


@pytest.mark.parametrize("params", [None, [], {}])
def test_no_params_is_empty_params(params: Any) -> None:
    """Neovim sends ``[]`` for an empty table."""
    assert structure_params(params, T.DirectoryParams) == T.DirectoryParams()
    assert structure_params(params, T.StatusParams) == T.StatusParams()


def test_params_are_camel_case_and_unknown_keys_ignored() -> None:
    params = {"query": "q", "sessionId": "s", "recentTools": ["Bash"], "future": 1}
    assert structure_params(params, T.RecallParams) == T.RecallParams(
        query="q", session_id="s", recent_tools=["Bash"]
    )


def test_memory_tool_params_keep_the_api_snake_case_and_accept_camel_case() -> None:
    snake = structure_params({"command": "view", "view_range": [1, 2]}, T.MemoryToolParams)
    camel = structure_params({"command": "view", "viewRange": [1, 2]}, T.MemoryToolParams)
    assert snake == camel
    assert snake.command_input() == {"command": "view", "view_range": [1, 2]}
    with pytest.raises(JsonRpcInvalidParams, match="given twice"):
        structure_params(
            {"command": "view", "viewRange": [1, 2], "view_range": [1, 3]}, T.MemoryToolParams
        )


def test_results_are_camel_case_through_one_converter() -> None:
    assert to_wire(RecallBudget(1, 2, 3, 4)) == {
        "used": 1,
        "left": 2,
        "limit": 3,
        "surfacedNow": 4,
    }
    outcome = T.ExtractOutcome(
        id="x",
        directory="file:///m",
        status="completed",
        reason=None,
        dry_run=True,
        renamed=[T.RenamedFile("a.md", "b.md")],
    )
    wire = json.loads(json.dumps(to_wire(outcome)))
    assert wire["dryRun"] is True and wire["renamed"] == [{"from": "a.md", "to": "b.md"}]
    assert "dry_run" not in wire and "stopReason" in wire
    doc = json.loads(S.SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = Draft202012Validator({"$ref": "#/$defs/ExtractOutcome", "$defs": doc["$defs"]})
    validator.validate(wire)


def test_protocol_ts_names_the_schema_methods_and_uses_the_generated_types() -> None:
    """The extension's method constants are exactly the schema's methods."""
    protocol_ts = S.TYPESCRIPT_PATH.with_name("protocol.ts").read_text(encoding="utf-8")
    constants = dict(re.findall(r"^export const (\w+) = '([^']+)';$", protocol_ts, re.M))
    methods = {v for k, v in constants.items() if k.startswith(("MEMORY_", "MEMDIR_"))}
    assert methods == {m.name for m in T.METHODS}
    assert "export type * from './protocolTypes';" in protocol_ts
    # No payload interface is written by hand any more.
    assert re.search(r"^export interface ", protocol_ts, re.M) is None
