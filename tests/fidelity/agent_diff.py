"""Compare memdir with an installed Claude Code release on every fixture and print the
differences: ``python tests/fidelity/agent_diff.py [--show] [VERSION] [FIXTURE...]`` with
``tests`` on ``sys.path`` (scripts/agent-diff.sh installs the release and runs this).

Exit status: 0 when there is no difference, 1 when there is one, 2 when the release is missing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from fidelity.agent import (
    PINNED_VERSION,
    agent_binary,
    injected_index,
    main_request,
    memory_dir_in_system,
    selector_requests,
    surfaced_memories,
)
from fidelity.compare import check
from fidelity.fixtures import FIXTURES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("version", nargs="?", default=PINNED_VERSION)
    parser.add_argument("fixtures", nargs="*", help="only these fixtures (default: all)")
    parser.add_argument(
        "--show",
        action="store_true",
        help="also print per fixture the agent's memory dir, what it injected and surfaced",
    )
    args = parser.parse_args(argv)
    binary = agent_binary(args.version)
    if not binary.exists():
        print(f"Claude Code {args.version} is not installed: {binary}", file=sys.stderr)
        print(f"run: bash scripts/install-claude-code.sh {args.version}", file=sys.stderr)
        return 2
    unknown = [name for name in args.fixtures if name not in FIXTURES]
    if unknown:
        parser.error(f"unknown fixtures {unknown}; known: {', '.join(FIXTURES)}")
    names = args.fixtures or list(FIXTURES)
    differing: list[str] = []
    known: list[str] = []
    for name in names:
        fixture = FIXTURES[name]
        with tempfile.TemporaryDirectory(prefix="memdir-fidelity-") as scratch:
            run, differences = check(binary, fixture, Path(scratch))
            if args.show:
                request = main_request(run)
                injected = injected_index(request)
                where = memory_dir_in_system(request) or "(no memory section)"
                print(f"{name}: {where.replace(scratch, '<scratch>')}", end="")
                print(f"  [{len(injected[1])} chars injected]" if injected else "", end="")
                last = run.prompts[-1] if run.prompts else None
                asked, surfaced = len(selector_requests(run, last)), surfaced_memories(run)
                if asked or surfaced:
                    print(
                        f"  [last turn: selector asked {asked}x, "
                        f"{len(surfaced or '')} chars surfaced]",
                        end="",
                    )
                print()
        if differences and fixture.known is not None:
            known.append(name)
            print(f"=== {name}: {fixture.what} (known difference: {fixture.known})")
            for difference in differences:
                print(difference.render())
            print()
        elif fixture.known is not None:
            differing.append(name)
            print(f"=== {name}: no longer differs, but is listed as a known difference")
            print()
        elif differences:
            differing.append(name)
            print(f"=== {name}: {fixture.what}")
            for difference in differences:
                print(difference.render())
            print()
    same = len(names) - len(differing) - len(known)
    summary = f"Claude Code {args.version}: {same} of {len(names)} fixtures identical"
    if known:
        summary += f", {len(known)} known and documented ({', '.join(known)})"
    print(
        summary + (f"; differences in: {', '.join(differing)}" if differing else ", no difference")
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
