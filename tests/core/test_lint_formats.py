"""Output formats: the JSON contract, SARIF 2.1.0 against the official schema, GitHub commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from memdir.faces.cli import main
from memhelpers import EXAMPLES, FIXTURES

MakeDir = Callable[..., Path]
SCHEMA = FIXTURES / "lint" / "sarif-schema-2.1.0.json"

GOOD = "integration tests must hit a real Postgres through testcontainers, never a mock"


def topic(name: str, description: str = GOOD, type_: str = "project", body: str = "B\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


@pytest.fixture
def messy(make_dir: MakeDir) -> Path:
    return make_dir(
        {
            "MEMORY.md": "- [A](a.md) — alpha\n- [A](a.md) — alpha\n- [Gone](gone.md) — x\n",
            "a.md": topic("a"),
            "sub/b.md": topic("b", "deploys go out on Tuesdays after the canary bake", "Project"),
            "c.md": '# No frontmatter, 100% sure: a "quoted" line, with commas\n',
            "d e.md": topic("d", "the staging freeze lifts on Thursdays at noon"),
        }
    )


def output(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(["lint", *argv])
    return capsys.readouterr().out


def test_json_contract(messy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(output([str(messy), "--format", "json"], capsys))
    assert isinstance(data, list) and data
    keys = {"path", "line", "column", "end_line", "end_column", "code", "severity", "message"}
    for item in data:
        assert keys <= set(item) <= keys | {"fix"}
        assert item["severity"] in ("error", "warning", "info", "hint")
        assert item["line"] >= 1 and item["column"] >= 1
        assert (item["end_line"], item["end_column"]) >= (item["line"], item["column"])
        assert "\\" not in item["path"] and not item["path"].startswith("/")
    dangling = next(i for i in data if i["code"] == "MEM005")
    # "- [Gone](gone.md)": the target starts at column 10 (1-based) and ends before ")".
    assert (dangling["path"], dangling["line"], dangling["column"]) == ("MEMORY.md", 3, 10)
    assert (dangling["end_line"], dangling["end_column"]) == (3, 17)
    duplicate = next(i for i in data if i["code"] == "MEM006")
    assert duplicate["fix"] == {
        "title": "Remove the duplicate entry for a.md (line 2)",
        "safe": True,
        "edits": [
            {
                "path": "MEMORY.md",
                "line": 2,
                "column": 1,
                "end_line": 3,
                "end_column": 1,
                "new_text": "",
            }
        ],
    }
    orphan = next(i for i in data if i["code"] == "MEM107" and i["path"] == "d e.md")
    assert orphan["fix"]["edits"][0]["new_text"].startswith("- [d](d%20e.md) — the staging")
    # A file in a folder is no orphan of the top index.
    assert not any(i["code"] == "MEM107" and i["path"] == "sub/b.md" for i in data)
    assert "creates" not in orphan["fix"]


def test_sarif_validates_against_the_official_schema(
    messy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(messy.parent)
    log = json.loads(output([str(messy), "--format", "sarif"], capsys))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(log, schema, cls=jsonschema.Draft4Validator)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert run["tool"]["driver"]["name"] == "memdir"
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rule_ids[:2] == ["MEM001", "MEM002"] and "MEM114" in rule_ids
    result = next(r for r in run["results"] if r["ruleId"] == "MEM005")
    assert rule_ids[result["ruleIndex"]] == "MEM005"
    assert result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "memory/MEMORY.md", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 3, "startColumn": 10, "endLine": 3, "endColumn": 17}
    fixed = next(r for r in run["results"] if r["ruleId"] == "MEM006")
    assert fixed["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"] == {
        "text": ""
    }


def test_sarif_outside_the_working_directory_uses_file_uris(
    messy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    log = json.loads(output([str(messy), "--format", "sarif"], capsys))
    jsonschema.validate(
        log, json.loads(SCHEMA.read_text(encoding="utf-8")), cls=jsonschema.Draft4Validator
    )
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
    }
    assert all(uri.startswith("file:///") for uri in uris)


def test_sarif_of_a_clean_dir_is_valid_and_empty(capsys: pytest.CaptureFixture[str]) -> None:
    examples = EXAMPLES
    log = json.loads(output([str(examples), "--format", "sarif"], capsys))
    jsonschema.validate(
        log, json.loads(SCHEMA.read_text(encoding="utf-8")), cls=jsonschema.Draft4Validator
    )
    assert log["runs"][0]["results"] == []


def test_github_annotations(
    messy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(messy.parent)
    lines = output([str(messy), "--format", "github"], capsys).splitlines()
    assert lines[0] == (
        "::warning file=memory/MEMORY.md,line=2,col=1,endLine=2,endColumn=20,title=MEM006::"
        "duplicate entry: a.md is already linked on line 1; each copy spends load budget, and "
        "two hooks for one file read like two memories"
    )
    assert any(line.startswith("::error file=memory/MEMORY.md,line=3,col=10,") for line in lines)
    no_fm = next(line for line in lines if "title=MEM101" in line)
    assert no_fm.startswith("::error file=memory/c.md,line=1,col=1,endLine=1,endColumn=")
    # Commas and colons in properties, percent signs and newlines in messages are escaped.
    assert all(line.count("::") == 2 for line in lines)


def test_text_paths_are_relative_to_the_base_the_caller_gives(
    messy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.config import load_settings
    from memdir.lint.formats import Section, format_text
    from memdir.lint.state import DirState

    # The command line: relative to the working directory, so a terminal can follow them.
    monkeypatch.chdir(messy.parent)
    lines = output([str(messy)], capsys).splitlines()
    assert lines[0].startswith("memory/MEMORY.md:2:1: warning MEM006 [*] ")
    assert any(line.startswith("memory/sub/b.md:4:7: warning MEM104 ") for line in lines)
    # The MCP tool: relative to the memory dir, as the model names files; None: absolute.
    state = DirState(messy, load_settings(messy))
    state.refresh()
    sections = [Section(state.lint())]
    lines = format_text(sections, relative_to=messy).splitlines()
    assert lines[0].startswith("MEMORY.md:2:1: warning MEM006 [*] ")
    assert any(line.startswith("sub/b.md:4:7: warning MEM104 ") for line in lines)
    absolute = format_text(sections, relative_to=None).splitlines()
    assert absolute[0].startswith(f"{messy / 'MEMORY.md'}:2:1: warning MEM006 [*] ")
