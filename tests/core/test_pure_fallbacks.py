"""memdir without compiled modules: the pure-Python fallbacks give the same results.

The VS Code extension bundles the server with pure-Python packages only (a .vsix cannot carry a
compiled module for every platform). Of the core install's dependencies two have compiled
parts: PyStemmer (C only; the pure ``snowballstemmer`` runs the same Snowball algorithm) and
PyYAML's optional libyaml binding (memdir always uses PyYAML's own loader, see memdir.agent.topic).
These tests compare the two stemmers word by word and selection by selection, show that the
libyaml loader would have changed lint's messages, and run the CLI in a subprocess that refuses
every compiled module of an installed package, as the bundle does.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import frontmatter.default_handlers
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from memdir.agent.topic import agent_fields, parse_topic_text
from memdir.agent.yaml_loaders import safe_loader
from memdir.recall import lexical, lexical_vocab
from memdir.recall.lexical import (
    STEMMER_BACKENDS,
    explain_query,
    load_stemmer,
    select_lexical,
    stemmer_backend,
    use_stemmer,
)
from memhelpers import ROOT, generate_memdir, load_recall_eval

#: The pure-Python stemmer is in the test extra (a plain install stems with PyStemmer).
needs_pure_stemmer = pytest.mark.skipif(
    importlib.util.find_spec("snowballstemmer") is None, reason="snowballstemmer not installed"
)

#: Run before the code under test: refuses every compiled module that an installed package
#: would load (the interpreter's own, in lib-dynload, stay), as in the VS Code bundle.
NO_COMPILED = """
import importlib.machinery, sys, sysconfig

_SITE = tuple({sysconfig.get_paths()[key] for key in ("purelib", "platlib")})


class _NoCompiled:
    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if (
            spec is not None
            and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)
            and spec.origin.startswith(_SITE)
        ):
            raise ModuleNotFoundError(f"{name} is compiled", name=name)
        return None


sys.meta_path.insert(0, _NoCompiled())
"""

#: Frontmatter corpora: the example directory and the recall benchmark's two directories, and
#: (the ``corpora`` fixture) the lint benchmark's generated directory with planted problems, bad
#: YAML among them.
REPO_CORPORA = [
    ROOT / "examples" / "memory",
    ROOT / "benchmarks" / "recall" / "memory",
    ROOT / "benchmarks" / "recall" / "memdir2",
]
CORPUS_IDS = ["examples", "recall-memory", "recall-memdir2", "bench-200"]


#: Frontmatter that neither the block nor the agent's retry of it parses, where libyaml and
#: PyYAML's own loader word or place the error differently.
BROKEN = {
    f"broken-{key}.md": f"---\nname: broken-{key}\n{yaml_lines}---\nBody.\n"
    for key, yaml_lines in {
        "nested": "description: nested value broken\nmetadata:\n  type: a: b\n",
        "sequence": "description: a list item among the keys\n- item\n",
        "quote": "description: 'it's quoted wrong\n",
        "indent": "description: indented\n  type: user\ntype: user\n",
        "tab": "description: after a tab\nmetadata:\n \ttype: user\n",
    }.items()
}


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    bench = tmp_path_factory.mktemp("bench") / "bench-200"
    return [*REPO_CORPORA, generate_memdir(bench, 200, seed=1, invalid_files=False)]


@pytest.fixture(scope="module")
def broken_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("broken") / "memory"
    root.mkdir()
    index = "".join(f"- [{name}]({name}) — broken frontmatter\n" for name in BROKEN)
    (root / "MEMORY.md").write_text(index, encoding="utf-8")
    for name, text in BROKEN.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _run(code: str, *args: str, blocked: bool) -> subprocess.CompletedProcess[str]:
    script = (NO_COMPILED if blocked else "") + code
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def _cli(*args: str, blocked: bool) -> subprocess.CompletedProcess[str]:
    code = "import sys\nfrom memdir.faces.cli import main\nraise SystemExit(main(sys.argv[1:]))\n"
    return _run(code, *args, blocked=blocked)


# --- the compiled modules themselves ---------------------------------------------------------
@needs_pure_stemmer
def test_the_subprocess_blocker_refuses_exactly_the_compiled_modules() -> None:
    code = """
import yaml, frontmatter.default_handlers as handlers
print(yaml.__with_libyaml__, handlers.SafeLoader is yaml.SafeLoader)
try:
    import Stemmer
except ImportError:
    print("no Stemmer")
import memdir.recall.lexical as lexical
print(lexical.stemmer_backend())
"""
    out = _run(code, blocked=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["False True", "no Stemmer", "snowballstemmer"]


def test_without_any_stemmer_the_error_says_what_to_install() -> None:
    code = """
import sys
sys.modules["Stemmer"] = None
sys.modules["snowballstemmer"] = None
from memdir.recall.lexical import tokenize
try:
    tokenize("deploys")
except ImportError as exc:
    print(exc)
"""
    out = _run(code, blocked=False)
    assert out.returncode == 0, out.stderr
    assert "PyStemmer" in out.stdout and "snowballstemmer" in out.stdout


# --- the stemmer -----------------------------------------------------------------------------
@pytest.fixture
def backend_reset() -> Iterator[None]:
    yield
    use_stemmer(None)


@needs_pure_stemmer
def test_the_fallback_is_the_pure_python_stemmer() -> None:
    # snowballstemmer.stemmer() hands out PyStemmer's class when PyStemmer is installed.
    pure = load_stemmer("snowballstemmer")
    inner = pure._stemmer  # type: ignore[attr-defined]
    assert type(inner).__module__ == "snowballstemmer.english_stemmer"
    assert inspect.getfile(type(inner)).endswith(".py")
    with pytest.raises(ValueError, match="unknown stemmer backend"):
        load_stemmer("porter")


@needs_pure_stemmer
def test_both_stemmers_come_from_the_same_snowball_release() -> None:
    """Each package is generated from one Snowball release, and releases change English stems
    (PyStemmer 2.2 stems "added" to "ad", 3.0 "internal" to "intern"; snowballstemmer 3.1 to
    "add" and "internal"): the same major.minor, or the comparisons below prove nothing."""
    versions = [metadata.version(name).split(".")[:2] for name in ("PyStemmer", "snowballstemmer")]
    assert versions[0] == versions[1], versions


def _vocabulary_words() -> set[str]:
    surfaces: list[str] = [s for group in lexical_vocab.SYNONYM_GROUPS for s in group]
    surfaces += lexical_vocab.GENERIC_WORDS
    for broad, narrow in lexical_vocab.NARROWER.items():
        surfaces += [broad, *narrow]
    surfaces += lexical._EN_STOP | lexical._EN_WEAK
    surfaces += lexical._WARNING_WORDS.split()
    surfaces += lexical._STEM_OVERRIDES
    return {w for s in surfaces for w in re.findall(r"[^\W_]+", s.lower())}


def _repository_words() -> set[str]:
    words: set[str] = set()
    roots = [ROOT / "docs", ROOT / "examples", ROOT / "tests", ROOT / "benchmarks" / "recall"]
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and path.suffix in {".md", ".py", ".json", ".jsonl"}:
                text = path.read_text(encoding="utf-8", errors="replace").lower()
                words.update(re.findall(r"[^\W_]+", text))
    return words


@needs_pure_stemmer
def test_both_stemmers_stem_every_word_alike() -> None:
    vocabulary = _vocabulary_words()
    words = sorted(vocabulary | _repository_words())
    assert len(vocabulary) > 300 and len(words) > 5000
    c_stems = load_stemmer("pystemmer").stemWords(words)
    pure_stems = load_stemmer("snowballstemmer").stemWords(words)
    assert [
        (word, c, pure)
        for word, c, pure in zip(words, c_stems, pure_stems, strict=True)
        if c != pure
    ] == []


@needs_pure_stemmer
@given(
    st.lists(
        st.text(
            st.one_of(
                st.sampled_from("abcdefghijklmnopqrstuvwxyz'yyeessiinngg"),
                st.characters(categories=["L", "N"]),
            ),
            min_size=1,
            max_size=20,
        ),
        min_size=1,
        max_size=20,
    )
)
def test_both_stemmers_agree_on_any_word(words: list[str]) -> None:
    assert load_stemmer("pystemmer").stemWords(words) == load_stemmer("snowballstemmer").stemWords(
        words
    )


def _selections(recall_eval: ModuleType) -> list[Any]:
    out: list[Any] = []
    for directory, files in recall_eval.CORPORA:
        candidates = recall_eval.load_candidates(directory)
        for path in files:
            for q in recall_eval.load_queries(path):
                out.append(explain_query(q.query))
                out.append(select_lexical(q.query, candidates, q.recent_tools))
    return out


@needs_pure_stemmer
@pytest.mark.usefixtures("backend_reset")
def test_both_stemmers_give_the_same_selections_on_every_benchmark_query() -> None:
    """Every question of every recall benchmark set (the sealed ones too), over its directory:
    the same concepts, scores, matched terms, drops and selection."""
    recall_eval = load_recall_eval()
    results = {}
    for backend in STEMMER_BACKENDS:
        use_stemmer(backend)
        assert stemmer_backend() == backend
        results[backend] = _selections(recall_eval)
    assert len(results["pystemmer"]) > 800
    assert results["pystemmer"] == results["snowballstemmer"]


@needs_pure_stemmer
@pytest.mark.usefixtures("backend_reset")
def test_the_pure_stemmer_is_safe_across_threads() -> None:
    use_stemmer("snowballstemmer")
    words = sorted(_vocabulary_words())
    expected = load_stemmer("pystemmer").stemWords(words)
    stemmer = lexical._stemmer()
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: stemmer.stemWords(words), range(32)))
    assert all(result == expected for result in results)


# --- YAML ------------------------------------------------------------------------------------
def _topic_texts(corpora: list[Path]) -> list[str]:
    texts = [
        path.read_text(encoding="utf-8", errors="replace")
        for corpus in corpora
        for path in sorted(corpus.rglob("*.md"))
    ]
    assert len(texts) > 300
    return texts + list(BROKEN.values())


def _parsed(text: str) -> str:
    """Everything lint and the scan read from ``text``; a repr, so a NaN equals itself."""
    topic = parse_topic_text(text, Path("/m/a.md"), "a.md")
    return repr((topic, agent_fields(text)))


@contextmanager
def _library_prefers(loader: str) -> Iterator[None]:
    """python-frontmatter's own choice of loader: libyaml's when PyYAML has it, else PyYAML's."""
    saved = frontmatter.default_handlers.SafeLoader
    frontmatter.default_handlers.SafeLoader = getattr(yaml, loader, yaml.SafeLoader)
    try:
        yield
    finally:
        frontmatter.default_handlers.SafeLoader = saved


def _parsed_by_each(text: str) -> list[str]:
    results = []
    for loader in ("SafeLoader", "CSafeLoader"):
        with _library_prefers(loader):
            results.append(_parsed(text))
    return results


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
def test_the_libyaml_loader_would_change_lint_messages() -> None:
    """Why memdir pins PyYAML's own loader: libyaml words and places errors differently."""
    for text in ("a: b: c", "a: [1, 2", "a: *x"):
        errors = []
        for loader in (safe_loader(), yaml.CSafeLoader):
            with pytest.raises(yaml.YAMLError) as caught:
                yaml.load(text, Loader=loader)
            mark = getattr(caught.value, "problem_mark", None)
            errors.append((getattr(caught.value, "problem", None), mark and mark.line))
        assert errors[0] != errors[1], text


#: Tabs as Claude Code 2.1.328 reads them in frontmatter (checked against the real CLI with
#: tests/fidelity's harness): white space after an indicator, inside a plain value and after a
#: block scalar's header; content after a block scalar's indentation. PyYAML alone refuses the
#: first four, libyaml the last.
AGENT_TABS = [
    ("description:\tafter the colon", {"description": "after the colon"}),
    ("name:\tx\ntype:\tproject", {"name": "x", "type": "project"}),
    ("description: inside\ta value", {"description": "inside\ta value"}),
    ("description: >-\t# folded\n  after the header", {"description": "after the header"}),
    ("description: |\n  \tafter the indentation", {"description": "\tafter the indentation\n"}),
]


@pytest.mark.parametrize(("block", "expected"), AGENT_TABS)
def test_tabs_are_read_as_the_agent_reads_them(block: str, expected: dict[str, str]) -> None:
    assert yaml.load(block + "\n", Loader=safe_loader()) == expected
    fields, problems = agent_fields(f"---\n{block}\n---\nbody\n")
    assert problems == () and fields["description"] == expected.get("description")


@pytest.mark.parametrize("block", ["\tname: x", "metadata:\n\ttype: user", "a: b\n \tc: d"])
def test_tabs_as_indentation_are_still_refused(block: str) -> None:
    with pytest.raises(yaml.YAMLError):
        yaml.load(block, Loader=safe_loader())


def _outcome(text: str, loader: type) -> tuple[str, str]:
    try:
        return "ok", repr(yaml.load(text, Loader=loader))
    except yaml.YAMLError:
        return "error", ""


#: Block-context pieces, tabs wherever they may go. Flow collections and block scalars are left
#: out: there libyaml refuses a few tabs YAML allows (after a block scalar's indentation, above).
_TABBY = st.lists(
    st.sampled_from(
        [
            *("a", "key", "name", "x y", "1", "yes", "é", "\u3000", "'", '"', ",", "?", "? "),
            *(":", ": ", ":\t", "\t", " ", "  ", "\n", "\n  ", "\n\t", "\n \t"),
            *("- ", "-\t", "#", " #", "\t#", "&a ", "*a", "!!str ", "---", "..."),
        ]
    ),
    max_size=14,
).map("".join)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
@given(_TABBY)
def test_tabs_are_read_as_libyaml_reads_them(text: str) -> None:
    """Values and accept/refuse as libyaml gives them (messages aside)."""
    assert _outcome(text, safe_loader()) == _outcome(text, yaml.CSafeLoader)


def test_frontmatter_reads_the_same_whichever_loader_the_library_prefers(
    corpora: list[Path],
) -> None:
    texts = _topic_texts(corpora)
    assert [text for text in texts if len(set(_parsed_by_each(text))) > 1] == []
    # Broken YAML among them, where libyaml's messages would differ.
    assert sum("malformed YAML" in _parsed(text) for text in texts) >= len(BROKEN)


_LINES = st.one_of(
    st.sampled_from(
        [
            "name: x",
            "description: a: b: c",
            "description: [1, 2",
            "type: *x",
            "\tname: tabbed",
            "  nested: value",
            "metadata:",
            "  type: project",
            "- item",
            "? key",
            "name: 'unclosed",
            'name: "esc \\x41"',
            "description: \x85next",
            "description: \u2028sep",
            "name: !!binary xx",
            "date: 2026-02-30",
            "%YAML 1.1",
            "key: |",
            "  block",
            "a: &anchor v",
            "b: *anchor",
            "{a: 1",
            "description: # comment",
        ]
    ),
    st.text(st.sampled_from("ab: -'\"[]{}#&*!|>%@`\t\n?,"), max_size=12),
)


@given(st.lists(_LINES, max_size=8))
def test_any_block_reads_the_same_whichever_loader_the_library_prefers(lines: list[str]) -> None:
    results = _parsed_by_each("---\n" + "\n".join(lines) + "\n---\nbody\n")
    assert results[0] == results[1]


# --- the whole CLI without compiled modules --------------------------------------------------
@pytest.mark.processes
@pytest.mark.parametrize("corpus", [*range(len(CORPUS_IDS)), None], ids=[*CORPUS_IDS, "broken"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_lint_without_compiled_modules_prints_the_same(
    corpus: int | None, fmt: str, corpora: list[Path], broken_dir: Path
) -> None:
    directory = broken_dir if corpus is None else corpora[corpus]
    args = ("lint", "--format", fmt, "--exit-zero", str(directory))
    normal, pure = _cli(*args, blocked=False), _cli(*args, blocked=True)
    assert normal.returncode == 0, normal.stderr
    assert (pure.returncode, pure.stdout, pure.stderr) == (0, normal.stdout, normal.stderr)


@needs_pure_stemmer
@pytest.mark.processes
@pytest.mark.parametrize(
    "query",
    [
        "how do I handle the release freeze for merges?",
        "数据库迁移怎么做",
        "what did we decide about API versioning and deployments",
    ],
)
def test_recall_without_compiled_modules_prints_the_same(query: str) -> None:
    args = (
        "recall",
        "--json",
        "--selector",
        "lexical",
        "--dir",
        str(ROOT / "examples" / "memory"),
        query,
    )
    normal, pure = _cli(*args, blocked=False), _cli(*args, blocked=True)
    assert normal.returncode == 0, normal.stderr
    assert pure.returncode == 0, pure.stderr
    answers = [json.loads(run.stdout) for run in (normal, pure)]
    for answer in answers:
        del answer["timings"], answer["elapsed_ms"]
    assert answers[0]["selected_memories"]  # a real selection, not an empty one
    assert answers[0] == answers[1]


# --- the language server without compiled modules --------------------------------------------
class _Lsp:
    """A bare JSON-RPC client over the server's stdio (this layer's tests need no pytest-lsp)."""

    def __init__(self, blocked: bool, config_dir: Path) -> None:
        code = "import sys\nfrom memdir_lsp.__main__ import main\nraise SystemExit(main())\n"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
        env["CLAUDE_CONFIG_DIR"] = str(config_dir)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", (NO_COMPILED if blocked else "") + code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
        )
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while header := stream.readline():
            length = (
                int(header.split(b":")[1]) if header.lower().startswith(b"content-length") else 0
            )
            while stream.readline().strip():
                pass
            self.inbox.put(json.loads(stream.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def wait(self, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message ``done`` accepts; the server's own requests are answered."""
        while True:
            message = self.inbox.get(timeout=60)
            if done(message):
                return message
            if "id" in message and "method" in message:
                items = message.get("params", {}).get("items", [])
                result = (
                    [None] * len(items) if message["method"] == "workspace/configuration" else None
                )
                self.send({"id": message["id"], "result": result})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        reply = self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)
        assert "error" not in reply, reply
        return reply["result"]

    def close(self) -> None:
        self.request("shutdown", {})
        self.send({"method": "exit"})
        assert self.proc.wait(timeout=30) == 0


def _server_session(blocked: bool, root: Path, config_dir: Path) -> list[Any]:
    """Findings pushed for the directory and for an edited buffer, and a recall's answer."""
    lsp = _Lsp(blocked, config_dir)
    uri = root.as_uri()
    folders = [{"uri": uri, "name": "memory"}]
    lsp.request(
        "initialize",
        {"processId": None, "rootUri": uri, "capabilities": {}, "workspaceFolders": folders},
    )
    lsp.send({"method": "initialized", "params": {}})
    pushed: dict[str, Any] = {}
    expected = {(root / name).as_uri() for name in BROKEN}

    def directory_pushed(message: dict[str, Any]) -> bool:
        if message.get("method") == "textDocument/publishDiagnostics":
            pushed[message["params"]["uri"]] = message["params"]["diagnostics"]
        return expected <= pushed.keys()

    lsp.wait(directory_pushed)
    # A buffer whose text differs from the file: its findings come from the buffer.
    buffer = (root / "broken-tab.md").as_uri()
    text = BROKEN["broken-nested.md"].replace("broken-nested", "broken-tab")
    document = {"uri": buffer, "languageId": "markdown", "version": 1, "text": text}
    lsp.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
    edited = lsp.wait(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == buffer
        )
    )
    query = {"query": "how do I handle the release freeze for merges?", "directory": uri}
    recall = lsp.request("memory/recall", query)
    lsp.close()
    return [sorted(pushed.items()), edited["params"], recall]


@needs_pure_stemmer
@pytest.mark.processes
def test_the_server_without_compiled_modules_answers_the_same(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    shutil.copytree(ROOT / "examples" / "memory", root)
    index = "".join(f"- [{name}]({name}) — broken frontmatter\n" for name in BROKEN)
    with (root / "MEMORY.md").open("a", encoding="utf-8") as handle:
        handle.write(index)
    for name, text in BROKEN.items():
        (root / name).write_text(text, encoding="utf-8")
    (tmp_path / "claude").mkdir()
    sessions = [_server_session(blocked, root, tmp_path / "claude") for blocked in (False, True)]
    for session in sessions:
        recall = session[-1]
        del recall["timings"], recall["elapsedMs"]
        assert recall["selectedMemories"] == ["project-release-freeze.md"]
    assert sessions[0] == sessions[1]
