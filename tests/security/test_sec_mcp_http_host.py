"""``memdir mcp --http``: Host and Origin are checked for every bind (DNS rebinding).

A web page whose name an attacker rebinds to 127.0.0.1 reaches a loopback server with its own
name in ``Host`` and ``Origin``. The SDK checks those only when bound to the literal
``127.0.0.1``, ``localhost`` or ``::1`` (and then accepts any port): bound to ``127.0.0.2`` or
``[0:0:0:0:0:0:0:1]``, the server answered ``Host: evil.example`` with the memories. Now every
bind accepts exactly its own host and port (and ``localhost`` on a loopback address), with raw
HTTP requests as a browser would send them. The matrix runs the command's own steps in process
(``--http`` parsed, the socket bound, the app built, uvicorn serving it in a thread); one test
runs the command itself.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
import uvicorn
from memdir.faces.cli.mcp import listen, parse_http
from memdir.faces.mcp_server import build_server
from memdir.faces.mcp_transport import allowed_hosts
from memhelpers import MCP_HEADERS, MCP_INITIALIZE, MCP_INITIALIZED, mcp_http

TOPIC = "---\nname: deploy\ndescription: how deploys work\ntype: project\n---\nStaging first.\n"
FILES: dict[str, str | bytes] = {"MEMORY.md": "- [Deploy](deploy.md) — how\n", "deploy.md": TOPIC}
READ = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "resources/read",
    "params": {"uri": "memdir://memory/deploy.md"},
}
#: Each form of a loopback bind; the SDK used to check only the first three.
BINDS = ["127.0.0.1", "[::1]", "localhost", "127.0.0.2", "127.1.2.3", "[0:0:0:0:0:0:0:1]"]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sec-mcp-host") / "memory"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(str(text), encoding="utf-8")
    return root


@pytest.fixture(scope="module", params=BINDS)
def served(request: pytest.FixtureRequest, memory: Path) -> Iterator[str]:
    """``memdir mcp --http BIND:0``'s steps in process, uvicorn in a thread; the URL its serving
    line would print. Requests wait in the socket's backlog until the server runs."""
    host, port = parse_http(f"{request.param}:0")
    sock, url = listen(host, port)
    bound, port = sock.getsockname()[:2]
    app = build_server(memory, read_only=True).http_app(host, port, bound=bound)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def sse_message(response: httpx2.Response) -> dict[str, Any]:
    data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
    assert data, response.text
    message: dict[str, Any] = json.loads(data[-1])
    return message


def post(url: str, message: dict[str, Any], **headers: str) -> httpx2.Response:
    return httpx2.post(url, json=message, headers={**MCP_HEADERS, **headers}, timeout=30)


def open_session(url: str, **headers: str) -> str:
    """A session opened and initialized with these headers."""
    opened = post(url, MCP_INITIALIZE, **headers)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    assert post(url, MCP_INITIALIZED, **headers, **{"mcp-session-id": session}).status_code == 202
    return session


def host_of(url: str) -> str:
    return urlsplit(url).netloc


# Each case: the extra headers of a request, from the server's own URL; 421 for a Host it does
# not answer to, 403 for an Origin that is not its own, 200 otherwise.
CASES: dict[str, tuple[Callable[[str], dict[str, str]], int]] = {
    "bad host": (lambda url: {"Host": "evil.example"}, 421),
    "bad host, its port": (lambda url: {"Host": f"evil.example:{urlsplit(url).port}"}, 421),
    "its host, another port": (
        lambda url: {"Host": f"{host_of(url).rsplit(':', 1)[0]}:{(urlsplit(url).port or 0) + 1}"},
        421,
    ),
    "bad origin": (lambda url: {"Origin": "http://evil.example"}, 403),
    "null origin": (lambda url: {"Origin": "null"}, 403),
    "its origin over https": (lambda url: {"Origin": f"https://{host_of(url)}"}, 403),
    "its host, no origin": (lambda url: {}, 200),
    "its host and origin": (lambda url: {"Origin": f"http://{host_of(url)}"}, 200),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_request_names_this_server_or_is_refused(served: str, case: str) -> None:
    headers, status = CASES[case]
    response = post(served, MCP_INITIALIZE, **headers(served))
    assert response.status_code == status, (case, response.text)
    if status != 200:
        assert "mcp-session-id" not in response.headers
        return
    session = open_session(served, **headers(served))
    read = post(served, READ, **headers(served), **{"mcp-session-id": session})
    assert read.status_code == 200
    assert sse_message(read)["result"]["contents"][0]["text"] == TOPIC


def test_an_open_session_is_not_read_through_another_host(served: str) -> None:
    session = open_session(served)
    for headers, status in (({"Host": "evil.example"}, 421), ({"Origin": "http://a.test"}, 403)):
        read = post(served, READ, **headers, **{"mcp-session-id": session})
        assert read.status_code == status
        assert "Staging first." not in read.text


def test_localhost_is_accepted_on_a_loopback_bind(served: str) -> None:
    port = urlsplit(served).port
    response = post(
        served, MCP_INITIALIZE, Host=f"localhost:{port}", Origin=f"http://localhost:{port}"
    )
    assert response.status_code == 200, response.text


def test_the_sessionless_protocol_is_checked_too(served: str) -> None:
    """2026-07-28 requests carry their own envelope and open no session: the same check."""
    version = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read"}
    for headers, status in (({"Host": "evil.example"}, 421), ({"Origin": "http://a.test"}, 403)):
        response = post(served, READ, **version, **headers)
        assert response.status_code == status, response.text
        assert "Staging first." not in response.text


@pytest.fixture
def command(memory: Path) -> Iterator[str]:
    """``memdir mcp --http 127.0.0.2:0`` itself: the URL of its serving line."""
    with mcp_http("--dir", str(memory), "--read-only", "--http", "127.0.0.2:0") as url:
        yield url


def test_the_command_checks_its_bind(command: str) -> None:
    assert post(command, MCP_INITIALIZE, Host="evil.example").status_code == 421
    assert post(command, MCP_INITIALIZE, Origin="http://evil.example").status_code == 403
    session = open_session(command, Origin=f"http://{host_of(command)}")
    read = post(command, READ, **{"mcp-session-id": session})
    assert sse_message(read)["result"]["contents"][0]["text"] == TOPIC


def test_allowed_hosts_are_exact() -> None:
    assert allowed_hosts("0:0:0:0:0:0:0:1", 8765) == [
        "[0:0:0:0:0:0:0:1]:8765",
        "[::1]:8765",
        "localhost:8765",
    ]
    assert allowed_hosts("localhost", 8765, bound="127.0.0.1") == [
        "localhost:8765",
        "127.0.0.1:8765",
    ]
    assert allowed_hosts("127.0.0.2", 80) == [
        "127.0.0.2:80",
        "127.0.0.2",
        "localhost:80",
        "localhost",
    ]
    # Not loopback (the command refuses such a bind; the check stays exact if one ever comes).
    assert allowed_hosts("192.0.2.7", 8765) == ["192.0.2.7:8765"]
    assert all(not host.endswith("*") for host in allowed_hosts("::1", 1))
