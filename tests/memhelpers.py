"""Helpers shared by the core tests (a plain module: ``conftest`` names collide across folders)."""

from __future__ import annotations

from pathlib import Path

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
