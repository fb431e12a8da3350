"""pytest-lsp fixtures: the real ``memdir-lsp`` in a subprocess, driven by a test client.

Every ``client`` test runs twice, with the capabilities of VS Code and of Neovim, because the
server gates features on them (pull diagnostics, resource operations, dynamic registration,
position encoding). Each test gets its own workspace: a memory directory opened directly as the
workspace folder, built on disk before the server starts. ``CLAUDE_CONFIG_DIR`` points at a temp
dir, so discovery of the agent's memory dir never touches the real ``~/.claude``, and no API key
reaches the server, so recall uses the deterministic lexical selector. ``api_client`` is the
exception: its server gets a key and a loopback fake of the Messages API (``memory/extract``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Union

import attrs
import pytest
import pytest_lsp
from fake_anthropic import FakeAnthropic
from lsp_helpers import FILES, Workspace, build, pull_like_vscode
from lsprotocol import types
from pygls.client import JsonRPCClient
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

#: Shared by every server started in this test run; tests create projects' memory under it.
CONFIG_DIR = Path(tempfile.mkdtemp(prefix="memdir-lsp-claude-"))

SERVER_ENV = {
    key: value for key, value in os.environ.items() if not key.startswith(("ANTHROPIC_", "CLAUDE_"))
}
SERVER_ENV["CLAUDE_CONFIG_DIR"] = str(CONFIG_DIR)

CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "memdir_lsp", "--stdio"],
    server_env=SERVER_ENV,
)


@attrs.define
class FakeApiConfig(ClientServerConfig):
    """A server whose anthropic SDK talks to :class:`FakeAnthropic` (started on first use).

    The SDK reads ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` from the environment, so the
    server needs no test-only switch; loopback traffic must not go through a proxy.
    """

    async def start(self, devtools: str | None = None) -> JsonRPCClient:
        self.server_env = {
            **SERVER_ENV,
            "ANTHROPIC_BASE_URL": FakeAnthropic.shared().url,
            "ANTHROPIC_API_KEY": "test-key",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        return await super().start(devtools)


API_CONFIG = FakeApiConfig(server_command=CONFIG.server_command)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "files(mapping): replace the workspace's files")
    config.addinivalue_line("markers", "lsp_settings(mapping): the client's `memdir` settings")
    config.addinivalue_line("markers", "init_options(mapping): initializationOptions")
    config.addinivalue_line("markers", "capabilities(fn): edit the client capabilities")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A server message beyond what the client declared is a bug in capability gating.
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"))


@pytest.fixture
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    marker = request.node.get_closest_marker("files")
    files = marker.args[0] if marker else FILES
    root = tmp_path / "memory"
    build(root, files)
    return Workspace(root)


def _fix_code_action_structuring(client: LanguageClient) -> None:
    """lsprotocol reads any code action with a ``command`` key as a Command.

    A CodeAction may carry a command object too (edit first, then command: how the server
    degrades for clients without CreateFile). Real clients look at the type of ``command``;
    make the test client do the same.
    """
    converter = client.protocol._converter

    def structure(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, structure)
    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)  # noqa: UP007


def _marker_value(request: pytest.FixtureRequest, name: str) -> Any:
    marker = request.node.get_closest_marker(name)
    return marker.args[0] if marker else None


async def _start_session(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Workspace
) -> None:
    _fix_code_action_structuring(lsp_client)
    settings = _marker_value(request, "lsp_settings")
    if settings is not None:
        lsp_client.set_configuration(settings, section="memdir")

    # pytest-lsp has no default handler for this; the server registers watchers with VS Code.
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: types.RegistrationParams) -> None:
        lsp_client.registrations = [*getattr(lsp_client, "registrations", []), params]

    @lsp_client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def _unregister(params: types.UnregistrationParams) -> None:
        return None

    capabilities = client_capabilities(request.param)
    if request.param == "visual_studio_code":
        pull_like_vscode(capabilities)
    edit_caps = _marker_value(request, "capabilities")
    if edit_caps is not None:
        edit_caps(capabilities)
    lsp_client.preset = request.param  # type: ignore[attr-defined]
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=workspace.uri,
            workspace_folders=[types.WorkspaceFolder(uri=workspace.uri, name="memory")],
            initialization_options=_marker_value(request, "init_options"),
        )
    )
    lsp_client.init_result = result  # type: ignore[attr-defined]


def client_fixture(config: ClientServerConfig) -> Any:
    """A ``client`` fixture, once per preset, whose server ``config`` starts (a test module
    with its own server assigns it to ``client``)."""

    @pytest_lsp.fixture(params=["visual_studio_code", "neovim"], config=config)
    async def client(
        request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Workspace
    ) -> AsyncIterator[None]:
        await _start_session(request, lsp_client, workspace)
        yield
        await asyncio.wait_for(lsp_client.shutdown_session(), 5.0)

    return client


client = client_fixture(CONFIG)


@pytest.fixture
def fake_api() -> FakeAnthropic:
    """The scripted Messages API behind ``api_client``'s server, emptied for each test."""
    api = FakeAnthropic.shared()
    api.reset()
    return api


@pytest_lsp.fixture(params=["visual_studio_code", "neovim"], config=API_CONFIG)
async def api_client(
    request: pytest.FixtureRequest,
    lsp_client: LanguageClient,
    workspace: Workspace,
    fake_api: FakeAnthropic,
) -> AsyncIterator[None]:
    """Like ``client``, with an API key and ``ANTHROPIC_BASE_URL`` at :class:`FakeAnthropic`."""
    await _start_session(request, lsp_client, workspace)
    yield
    fake_api.release()  # a test that held a reply must not leave the SDK waiting
    await asyncio.wait_for(lsp_client.shutdown_session(), 5.0)
