"""``aim-engine crds`` and ``aim-engine plugins``: what this installation serves and loads."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("crds", help="print the CustomResourceDefinitions of aim.eai.amd.com/v1alpha1")
    p.set_defaults(func=crds)

    p = sub.add_parser("plugins", help="list installed plugins and the hooks they implement")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=plugins)


def crds(args: argparse.Namespace) -> int:
    from aim_core.api.crds import render_yaml

    sys.stdout.write(render_yaml())
    return 0


def plugins(args: argparse.Namespace) -> int:
    from aim_core.plugin.manager import describe_plugins, get_plugin_manager

    rows = describe_plugins(get_plugin_manager())
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for row in rows:
            hooks = ", ".join(row["hooks"]) or "(no hooks yet)"
            sys.stdout.write(f"{row['name']} {row['version']}  [{row['distribution']}]\n    hooks: {hooks}\n")
    return 0
