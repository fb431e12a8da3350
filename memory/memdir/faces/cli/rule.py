"""``memdir rule [CODE]``: a lint rule's documentation page, or the list of rules.

The page is the one the docs site shows for the code, so the explanation travels with the
installed package.
"""

from __future__ import annotations

import argparse

from memdir.faces.cli.common import CliError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rule = subparsers.add_parser(
        "rule",
        help="explain a lint rule (MEM001); without a code, list the rules",
        description="Print the documentation of a lint rule: what it means, why it matters "
        "to the agent, an example and how to fix it. Without a code, list every rule; preview "
        "rules (off unless `memdir lint --preview` or `preview = true`) are marked.",
    )
    rule.add_argument("code", nargs="?", metavar="CODE", help="rule code, e.g. MEM001")
    rule.set_defaults(func=cmd_rule)


def cmd_rule(args: argparse.Namespace) -> int:
    from memdir.lint.docs import rule_page
    from memdir.lint.rules import RULES

    code: str | None = args.code
    if code is None:
        width = max(len(rule.name) for rule in RULES.values())
        for rule in RULES.values():
            preview = "  preview (off unless --preview)" if rule.preview else ""
            print(f"{rule.code}  {rule.name:<{width}}  {rule.severity:<7}{preview}".rstrip())
        return 0
    found = RULES.get(code.strip().upper())
    if found is None:
        raise CliError(f"unknown rule code {code!r} (`memdir rule` lists them)")
    print(rule_page(found), end="")
    return 0
