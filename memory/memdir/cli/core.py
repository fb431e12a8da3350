"""``memdir where``, ``index``, ``manifest`` and ``show``: the agent's view of a memory dir."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memdir import constants as C
from memdir.cli.common import (
    CliError,
    add_dir_argument,
    add_json_argument,
    print_json,
    resolve_dir,
    resolve_inside,
)

# Every subcommand is registered on each run, so registration imports nothing heavy: the core
# modules load inside the command that uses them (`memdir lint` never pays for `manifest`).


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    where = subparsers.add_parser("where", help="print the memory dir of a project path")
    where.add_argument("path", nargs="?", type=Path, help="project path (default: current dir)")
    add_json_argument(where)
    where.set_defaults(func=cmd_where)

    index = subparsers.add_parser(
        "index", help="print exactly what path A injects of MEMORY.md, with the cap summary"
    )
    add_dir_argument(index)
    add_json_argument(index)
    index.set_defaults(func=cmd_index)

    manifest = subparsers.add_parser("manifest", help="print the manifest the selector sees")
    add_dir_argument(manifest)
    add_json_argument(manifest)
    manifest.set_defaults(func=cmd_manifest)

    show = subparsers.add_parser("show", help="print exactly what path B injects for one file")
    show.add_argument("file", help="topic file, relative to the memory dir or absolute")
    add_dir_argument(show)
    add_json_argument(show)
    show.set_defaults(func=cmd_show)


def cmd_where(args: argparse.Namespace) -> int:
    from memdir.paths import locate_memory_dir

    path: Path | None = args.path
    if path is not None and not path.expanduser().exists():
        raise CliError(f"no such path: {path}")
    location = locate_memory_dir(path.expanduser() if path else None)
    if args.json:
        print_json(location.to_json())
        return 0
    for note in location.notes:
        print(f"memdir where: note: {note}", file=sys.stderr)
    if location.memory_dir is None:
        raise CliError(f"no memory dir matches {location.prefix_pattern} yet")
    print(location.memory_dir)
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from memdir.index import load_index

    directory = resolve_dir(args.dir)
    index = load_index(directory)
    load = index.load
    cut = [
        {"line": e.line + 1, "title": e.title, "path": e.path, "raw": e.raw}
        for e in index.cut_entries
    ]
    if args.json:
        print_json(
            {
                "path": str(index.path),
                "exists": index.exists,
                "text": load.text,
                "lines": load.line_count,
                "chars": load.char_count,
                "loaded_lines": load.loaded_lines,
                "loaded_chars": load.loaded_chars,
                "max_lines": C.INDEX_MAX_LINES,
                "max_chars": C.INDEX_MAX_CHARS,
                "truncated": load.truncated,
                "reason": load.reason,
                "entries": len(index.entries),
                "cut_entries": cut,
            }
        )
        return 0
    if not index.exists:
        print(
            f"memdir index: note: {index.path} does not exist; path A injects nothing",
            file=sys.stderr,
        )
        return 0
    sys.stdout.write(load.text + ("\n" if load.text else ""))
    sys.stdout.flush()
    # The summary goes to stderr so stdout stays exactly the injected text.
    summary = (
        f"{load.line_count}/{C.INDEX_MAX_LINES} lines · "
        f"{load.char_count:,}/{C.INDEX_MAX_CHARS:,} chars (UTF-16) · "
        f"{len(index.entries)} entries"
    )
    print(f"-- {summary}", file=sys.stderr)
    if load.truncated:
        print(f"-- truncated: {load.reason}; {len(cut)} entries never loaded:", file=sys.stderr)
        for item in cut:
            print(f"--   line {item['line']}: {item['raw']}", file=sys.stderr)
    return 0


def cmd_manifest(args: argparse.Namespace) -> int:
    from memdir.manifest import format_manifest, header_json
    from memdir.scan import scan

    directory = resolve_dir(args.dir)
    result = scan(directory)
    if args.json:
        print_json(
            {
                "candidates": [header_json(h) for h in result.candidates],
                "manifest": format_manifest(result.candidates),
                "cut_off": [h.rel_path for h in result.cut_off],
                "skipped": [{"path": s.rel_path, "reason": s.reason} for s in result.skipped],
            }
        )
        return 0
    text = format_manifest(result.candidates)
    if text:
        print(text)
    if result.cut_off:
        print(
            f"-- {len(result.cut_off)} older files are past the {C.SCAN_MAX_FILES}-file window "
            "and never candidates:",
            file=sys.stderr,
        )
        for header in result.cut_off:
            print(f"--   {header.rel_path}", file=sys.stderr)
    for skipped in result.skipped:
        print(f"-- skipped {skipped.rel_path}: {skipped.reason}", file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from memdir.surface import surface_file

    directory = resolve_dir(args.dir)
    path = resolve_inside(directory, args.file)
    if path.name == C.INDEX_FILENAME:
        raise CliError(
            "MEMORY.md is the index (path A, see `memdir index`), never surfaced on path B"
        )
    try:
        memory = surface_file(path, directory)
    except OSError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        data = memory.to_json()
        data["lines"] = memory.lines
        print_json(data)
        return 0
    print(memory.text)
    return 0
