"""``aim-engine crds`` and ``aim-engine plugins``: what this installation serves and loads."""

from __future__ import annotations

import argparse
import json
import sys

from aim_core.cli.common import add_output_option, command_parser


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "crds",
        "print the CustomResourceDefinitions of aim.eai.amd.com/v1alpha1",
        [
            "aim-engine crds | kubectl apply --server-side -f -",
            "aim-engine crds -o json | jq '.items[].spec.names.kind'",
        ],
    )
    add_output_option(p, ["yaml", "json"])
    p.set_defaults(func=crds)

    p = command_parser(
        sub,
        "plugins",
        "list installed plugins and the hooks they implement",
        ["aim-engine plugins", "aim-engine plugins -o json"],
    )
    add_output_option(p, ["text", "json"])
    p.add_argument("--json", dest="output", action="store_const", const="json", help=argparse.SUPPRESS)
    p.set_defaults(func=plugins)


def crds(args: argparse.Namespace) -> int:
    from aim_core.api.crds import render_yaml

    if args.output == "json":
        from aim_core.api.crds import generate_crds

        items = list(generate_crds())
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(render_yaml())
    return 0


def plugins(args: argparse.Namespace) -> int:
    from aim_core.plugin.manager import describe_plugins, get_plugin_manager

    rows = describe_plugins(get_plugin_manager())
    if args.output == "json":
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for row in rows:
            hooks = ", ".join(row["hooks"]) or "(no hooks yet)"
            sys.stdout.write(f"{row['name']} {row['version']}  [{row['distribution']}]\n    hooks: {hooks}\n")
    return 0
