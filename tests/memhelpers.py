"""Helpers shared by the core tests (a plain module: ``conftest`` names collide across folders)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from memdir.model import MemoryHeader

#: The repository checkout the tests run in.
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "memory"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


#: The query and the one memory the agent-face tests recall with it.
DEPLOY_QUERY = "how do deploys to the staging cluster work?"
DEPLOY_MEMORY = (
    "---\nname: deploy\ndescription: how deploys to the staging cluster work\n"
    "metadata:\n  type: project\n---\nDeploys go through the staging cluster first.\n"
)


def load_recall_eval() -> ModuleType:
    """``benchmarks/recall_eval.py``, the recall benchmark, as a module (it is a script)."""
    spec = importlib.util.spec_from_file_location("recall_eval", ROOT / "benchmarks/recall_eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["recall_eval"] = module
    spec.loader.exec_module(module)
    return module


def generate_memdir(root: Path, files: int, seed: int = 1, invalid_files: bool = True) -> Path:
    """A generated memory dir with planted problems (``benchmarks/gen_memdir.py``) at ``root``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import gen_memdir
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    gen_memdir.generate(root, files, seed=seed, invalid_files=invalid_files)
    return root


def memory_header(
    rel: str, description: str, type_: str | None = "project", age: int = 0
) -> MemoryHeader:
    """A selector candidate without a file: ``age`` minutes older than the newest."""
    return MemoryHeader(
        path=Path("/memory") / rel,
        rel_path=rel,
        mtime=1_800_000_000.0 - age * 60,
        size=200,
        name=rel.removesuffix(".md"),
        description=description,
        type=type_,
    )


def selector_env_vars() -> tuple[str, ...]:
    """Every variable that makes `auto` choose a model selector or points one somewhere."""
    from memdir.config import OPENAI_BASE_URL_ENV
    from memdir.select import CREDENTIAL_ENV_VARS
    from memdir.select_openai import API_KEY_ENV

    return (*CREDENTIAL_ENV_VARS, API_KEY_ENV, OPENAI_BASE_URL_ENV)
