"""``memdir-lsp``: start the language server on stdio (default) or TCP.

vscode-languageclient appends ``--stdio`` to the command line, so it is accepted (and is the
default). ``--tcp --port N`` is for attaching a debugger or a client by hand. Logs go to stderr
(stdout is the protocol channel), warnings and errors only unless ``-v`` asks for more; pygls
logs every message at INFO, so its JSON-RPC logger stays at WARNING unless ``-vv``. Importing
this module stays light: the recall pipeline (and the ``anthropic`` SDK behind it) is imported
only when a recall request arrives.
"""

from __future__ import annotations

import argparse
import logging
import sys

from memdir import __version__

from memdir_lsp.protocol import SERVER_NAME


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=SERVER_NAME, description="Language server for agent memory directories (memdir)."
    )
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument(
        "--stdio", action="store_true", help="communicate over stdin/stdout (default)"
    )
    transport.add_argument("--tcp", action="store_true", help="listen on a TCP port")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default: 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=2087, help="TCP port (default: 2087; 0: any free port)"
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-vv: JSON-RPC traffic)"
    )
    parser.add_argument("--log-file", help="also write the log to this file")
    parser.add_argument("--version", action="version", version=f"{SERVER_NAME} {__version__}")
    return parser


def configure_logging(verbose: int, log_file: str | None) -> None:
    stderr = logging.StreamHandler(sys.stderr)
    # Clients log the server's stderr as errors (Neovim files every line at ERROR), so it
    # carries only warnings and errors unless -v asks; what the user should read goes to the
    # client as window/logMessage, and --log-file keeps the routine lines too.
    stderr.setLevel(logging.NOTSET if verbose else logging.WARNING)
    handlers: list[logging.Handler] = [stderr]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    # pygls logs every message it sends at INFO: noise, and slow on big payloads.
    rpc_level = logging.DEBUG if verbose >= 2 else logging.WARNING
    logging.getLogger("pygls.protocol.json_rpc").setLevel(rpc_level)
    logging.getLogger("pygls.protocol.language_server").setLevel(rpc_level)
    logging.getLogger("pygls.feature_manager").setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.tcp and not 0 <= args.port < 65536:
        print(f"{SERVER_NAME}: error: --port must be 0-65535", file=sys.stderr)
        return 2
    configure_logging(args.verbose, args.log_file)
    from memdir_lsp import adapter
    from memdir_lsp.server import create_server

    server = create_server()
    # Our reader, not pygls': it survives malformed headers and answers unreadable messages.
    if args.tcp:
        adapter.start_tcp(server, args.host, args.port)
    else:
        adapter.start_io(server)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
