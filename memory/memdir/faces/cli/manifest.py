"""``memdir manifest``: the manifest the relevance selector (path B) sees."""

from __future__ import annotations

import argparse
import sys

from memdir import constants as C
from memdir.faces.cli.common import (
    add_dir_argument,
    add_json_argument,
    print_json,
    resolve_dir,
    shown,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    manifest = subparsers.add_parser("manifest", help="print the manifest the selector sees")
    add_dir_argument(manifest)
    add_json_argument(manifest)
    manifest.set_defaults(func=cmd_manifest)


def cmd_manifest(args: argparse.Namespace) -> int:
    from memdir.agent.manifest import format_manifest
    from memdir.agent.scan import scan
    from memdir.faces.projections import cli_json, manifest_view

    directory = resolve_dir(args)
    result = scan(directory)
    if args.json:
        print_json(cli_json(manifest_view(result)))
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
            print(f"--   {shown(directory / header.rel_path)}", file=sys.stderr)
    for skipped in result.skipped:
        print(
            f"-- skipped {shown(directory / skipped.rel_path)}: {skipped.reason}", file=sys.stderr
        )
    return 0
