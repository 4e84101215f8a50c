"""``aim-engine templates clone``: copies of the cluster templates of one GPU for another (F87), as YAML."""

from __future__ import annotations

import argparse
import sys

from aim_core.cli.common import add_cluster_options, add_filename_option, command_parser, error, subcommands


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "templates",
        "tools for service templates (read the cluster, print YAML)",
        ["aim-engine templates clone --from-gpu MI300X --to-gpu MI308X | kubectl apply -f -"],
    )
    actions = subcommands(p, "templates_action")
    c = command_parser(
        actions,
        "clone",
        "print copies of every AIMClusterServiceTemplate of one GPU model for another GPU model",
        [
            "aim-engine templates clone --from-gpu MI300X --to-gpu MI308X | kubectl apply -f -",
            "aim-engine templates clone --from-gpu MI300X --to-gpu MI308X -f examples/templates.yaml",
        ],
        description="Read the AIMClusterServiceTemplates (from the cluster, or from -f files) and print, as YAML "
        "for kubectl apply, a copy of each one whose GPU model is --from-gpu with hardware.gpu.model "
        "--to-gpu and AIM_GPU_MODEL=<from-gpu> in its env (upstream's hack/clone-templates-for-gpu.sh).",
    )
    c.add_argument("--from-gpu", required=True, metavar="MODEL", help="GPU model of the templates to copy, e.g. MI300X")
    c.add_argument("--to-gpu", required=True, metavar="MODEL", help="GPU model of the copies, e.g. MI308X")
    add_filename_option(c, "read templates from here instead of the cluster")
    add_cluster_options(c)
    c.set_defaults(func=clone)


def clone(args: argparse.Namespace) -> int:
    import yaml

    from aim_core.template.clone import clone_templates

    if args.from_gpu.strip().upper() == args.to_gpu.strip().upper():
        error("--from-gpu and --to-gpu name the same GPU model")
        return 2
    templates = _from_files(args.filename) if args.filename else _from_cluster(args)
    if templates is None:
        return 1
    clones = clone_templates(templates, args.from_gpu, args.to_gpu)
    if not clones:
        error(f"no AIMClusterServiceTemplate for GPU {args.from_gpu} (or every copy exists already)")
        return 1
    yaml.safe_dump_all(clones, sys.stdout, sort_keys=False, explicit_start=True)
    return 0


def _from_files(paths: list[str]) -> list[dict]:
    from aim_core.cli.inputs import load_documents

    return [d for d in load_documents(paths) if d.get("kind") == "AIMClusterServiceTemplate"]


def _from_cluster(args: argparse.Namespace) -> list[dict] | None:
    from aim_core.cli.common import on_cluster
    from aim_core.reconcile.resources import CLUSTER_TEMPLATES

    return on_cluster(args, lambda cluster: cluster.list(CLUSTER_TEMPLATES))
