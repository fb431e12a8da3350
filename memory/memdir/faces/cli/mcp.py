"""``memdir mcp``: serve a memory dir to MCP clients (Claude Code, VS Code, Cursor, Cline, ...).

stdio by default (the client starts the process); ``--http HOST:PORT`` serves streamable HTTP
at ``/mcp`` on a loopback address only, since the tools read and write memories without any
authentication. The ``mcp`` SDK is the ``[mcp]`` extra, imported only here, when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from memdir.extras import require
from memdir.faces.cli.common import CliError, add_dir_argument, resolve_dirs

if TYPE_CHECKING:
    import socket

    from memdir.faces.mcp_server import MemdirServer


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve the memory dir to agents over MCP (memory tool, recall, search, lint)",
        description=(
            "Run an MCP server over the memory dir: the API memory tool, recall (what path B "
            "would inject), search, lint and the index, and each memory file as a resource. "
            "stdio by default. With several DIRs each tool takes a `directory` argument; the "
            "first DIR is the default."
        ),
    )
    add_dir_argument(parser, several=True)
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="offer only reads: the memory tool's `view`, recall, search, lint, the index",
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help=(
            "serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback only; "
            "port 0: any free port)"
        ),
    )
    parser.set_defaults(func=cmd_mcp)


def parse_http(value: str) -> tuple[str, int]:
    """``127.0.0.1:8765`` (or ``[::1]:8765``, ``localhost:8765``), refusing other hosts."""
    import ipaddress  # here: `memdir --help` registers this command too

    host, sep, port_text = value.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) < 65536:
        raise CliError(f"--http wants HOST:PORT, e.g. 127.0.0.1:8765, got {value!r}")
    host = host.removeprefix("[").removesuffix("]")
    loopback = host == "localhost"
    if not loopback:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
    if not loopback:
        raise CliError(
            f"--http {host} is not a loopback address: memdir mcp serves memories without "
            "authentication, so only 127.0.0.1, ::1 or localhost are allowed"
        )
    return host, int(port_text)


def cmd_mcp(args: argparse.Namespace) -> int:
    http = parse_http(args.http) if args.http else None
    directories = resolve_dirs(args)
    require("mcp", "the MCP server")  # before the SDK's imports: a missing extra is one line
    from memdir.faces.mcp_server import build_server

    # Over stdio the client is one agent process: its session is shared with the prompt hook.
    server = build_server(directories, read_only=args.read_only, agent_sessions=http is None)
    if http is None:
        server.run("stdio")
    else:
        serve_http(server, *http, ", ".join(str(d) for d in directories))
    return 0


def listen(host: str, port: int) -> tuple[socket.socket, str]:
    """A socket listening on ``host:port`` (port 0: any free one) and the URL it serves."""
    import socket

    ipv6 = ":" in host
    sock = socket.create_server((host, port), family=socket.AF_INET6 if ipv6 else socket.AF_INET)
    return sock, f"http://{f'[{host}]' if ipv6 else host}:{sock.getsockname()[1]}/mcp"


def serve_http(server: MemdirServer, host: str, port: int, served: str) -> None:
    """The SDK's streamable HTTP app on a socket bound before the "serving" line is printed:
    whoever waits for that line (a person, a test) can connect at once, and with port 0 it
    names the port taken. Requests must name that host and port (see
    :func:`memdir.faces.mcp_transport.allowed_hosts`)."""
    import anyio
    import uvicorn

    sock, url = listen(host, port)
    print(f"memdir mcp: serving {served} at {url}", file=sys.stderr, flush=True)
    bound, port = sock.getsockname()[:2]
    app = server.http_app(host, port, bound=bound)
    config = uvicorn.Config(app, log_level=server.settings.log_level.lower())
    anyio.run(uvicorn.Server(config).serve, [sock])
