"""``aim-engine describe service``: the chain of one AIMService, read from the live cluster, as a tree."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from aim_core.cli.common import (
    add_cluster_options,
    add_output_option,
    command_parser,
    error,
    on_cluster,
    stdout_console,
    subcommands,
)

_STYLES = {
    "Ready": "green",
    "Running": "green",
    "Progressing": "yellow",
    "Starting": "yellow",
    "Pending": "yellow",
    "Degraded": "red",
    "Failed": "bold red",
    "NotAvailable": "red",
    "Missing": "bold red",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "describe",
        "show an object and everything it depends on, from the live cluster",
        ["aim-engine describe service qwen-chat -n ml-team"],
    )
    kinds = subcommands(p, "describe_kind")
    s = command_parser(
        kinds,
        "service",
        "an AIMService: model, template, cache, artifacts, serving objects, route",
        ["aim-engine describe service qwen-chat -n ml-team", "aim-engine describe service qwen-chat -o json"],
        codes="Exit status: 0 shown; 1 not found, or the cluster cannot be reached; 2 bad usage.",
    )
    s.add_argument("name", help="the AIMService's name")
    s.add_argument("-n", "--namespace", default=None, help="its namespace (default: the context's, else default)")
    add_cluster_options(s)
    add_output_option(s, ["text", "json"])
    s.set_defaults(func=service)


def service(args: argparse.Namespace) -> int:
    from aim_core.cli.chain import describe_service
    from aim_core.plugin.manager import get_plugin_manager

    plugins = get_plugin_manager()

    async def read(cluster: Any) -> tuple[str, object]:
        namespace = args.namespace or cluster.credentials.default_namespace or "default"
        return namespace, await describe_service(cluster, plugins, namespace, args.name)

    read_back = on_cluster(args, read)
    if read_back is None:
        return 1
    namespace, chain = read_back
    if chain is None:
        error(f"AIMService {namespace}/{args.name} not found (kubectl get aimservices -n {namespace} lists them)")
        return 1
    if args.output == "json":
        json.dump(chain.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_tree(chain)
    return 0


def details_text(details: dict) -> str:
    """``minReplicas=1  maxReplicas=3  triggers: cpu Utilization 80  conditions: Ready=True Active=False``."""

    def shown(value) -> str:
        if isinstance(value, dict):
            return " ".join(f"{k}={v}" for k, v in value.items()) or "none"
        if isinstance(value, list):
            return "; ".join(str(v) for v in value) or "none"
        return str(value)

    return "  ".join(
        f"{key}={value}" if not isinstance(value, dict | list) else f"{key}: {shown(value)}"
        for key, value in details.items()
    )


def print_tree(chain) -> None:
    from rich.markup import escape
    from rich.tree import Tree

    def label(link) -> str:
        where = f"{link.namespace}/" if link.namespace else ""
        shown = where + link.name if link.name else "(none)"
        style = _STYLES.get(link.state, "bold")
        text = f"[bold]{escape(link.kind)}[/bold] {escape(shown)}  [{style}]{escape(link.state)}[/{style}]"
        why = ": ".join(part for part in (link.reason, link.message) if part)
        text = f"{text}  {escape(why)}" if why else text
        return f"{text}\n[dim]{escape(details_text(link.details))}[/dim]" if link.details else text

    def grow(node, link) -> None:
        for child in link.children:
            grow(node.add(label(child)), child)

    tree = Tree(label(chain), guide_style="dim")
    grow(tree, chain)
    console = stdout_console()
    console.print(tree, soft_wrap=True)
