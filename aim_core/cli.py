"""The ``aim-engine`` command: ``run``, ``crds``, ``plugins``, ``render``, ``tags``, ``inspect``, ``artifact``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


def _cmd_crds(args: argparse.Namespace) -> int:
    from aim_core.api.crds import render_yaml

    sys.stdout.write(render_yaml())
    return 0


def _cmd_plugins(args: argparse.Namespace) -> int:
    from aim_core.plugins import describe_plugins, get_plugin_manager

    rows = describe_plugins(get_plugin_manager())
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for row in rows:
            hooks = ", ".join(row["hooks"]) or "(no hooks yet)"
            sys.stdout.write(f"{row['name']} {row['version']}  [{row['distribution']}]\n    hooks: {hooks}\n")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from aim_core.operator.run import run

    return run(args)


def _cmd_render(args: argparse.Namespace) -> int:
    import asyncio

    from aim_core.operator.settings import gpu_preference
    from aim_core.plugins import get_plugin_manager
    from aim_core.render import format_rendered, load_documents, render

    docs = load_documents(args.file + (args.nodes or []))
    results = asyncio.run(render(docs, plugins=get_plugin_manager(), operator_namespace=args.operator_namespace,
                                 gpu_preference=gpu_preference(args.gpu_preference)))
    kinds = set(args.kind) if args.kind else None
    sys.stdout.write(format_rendered(results, explain=args.explain, only_kinds=kinds))
    return 0


_GPU_PREFERENCE_HELP = (
    "GPU models best first for template auto-selection, comma-separated (e.g. MI355X,MI350X,MI325X,MI300X); "
    "models left out rank last, equal; default: $AIM_GPU_PREFERENCE, else upstream's MI325X,MI300X,MI250X,MI210"
)


def _cmd_tags(args: argparse.Namespace) -> int:
    import asyncio

    from aim_core.modelsource.preview import format_preview, preview
    from aim_core.plugins import get_plugin_manager

    try:
        selector, result = asyncio.run(preview(
            get_plugin_manager(), args.repo, registry=args.registry, versions=args.versions or (),
            exclude=args.exclude or (), docker_config=args.pull_secret,
        ))
    except (OSError, ValueError) as exc:  # unreadable --pull-secret file or docker config
        sys.stderr.write(f"aim-engine: {exc}\n")
        return 2
    sys.stdout.write(format_preview(selector, result, as_json=args.json))
    for failure in result.failures:
        sys.stderr.write(f"aim-engine: {selector.text}: {failure.reason}: {failure.message}\n")
    return 1 if result.failures else 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    import asyncio

    from aim_core.plugins import get_plugin_manager
    from aim_core.registry import InvalidImageReference, InvalidPullSecret, RegistryError
    from aim_core.registry.inspection import format_inspection, inspect_image

    try:
        result = asyncio.run(inspect_image(get_plugin_manager(), args.image, docker_config=args.pull_secret))
    except (OSError, InvalidImageReference, InvalidPullSecret) as exc:
        sys.stderr.write(f"aim-engine: {exc}\n")
        return 2
    except RegistryError as exc:
        sys.stderr.write(f"aim-engine: {exc.reason}: {exc}\n")
        return 1
    sys.stdout.write(format_inspection(result, as_json=args.json))
    if result.label_error:
        sys.stderr.write(f"aim-engine: the labels cannot be read as AIM metadata: {result.label_error}\n")
        return 1
    return 0


def _cmd_artifact_download(args: argparse.Namespace) -> int:
    from aim_core.downloader.run import download

    return download(args.source_uri)


def _cmd_artifact_check_size(args: argparse.Namespace) -> int:
    from aim_core.downloader.run import check_size

    return check_size(args.source_uri)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aim-engine", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("crds", help="print the CustomResourceDefinitions of aim.eai.amd.com/v1alpha1")
    p.set_defaults(func=_cmd_crds)

    p = sub.add_parser("plugins", help="list installed plugins and the hooks they implement")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=_cmd_plugins)

    p = sub.add_parser("render", help="plan given AIM objects offline and print what the operator would apply")
    p.add_argument("-f", "--file", action="append", required=True, help="YAML file or directory (repeatable)")
    p.add_argument("--nodes", action="append", help="YAML file or directory with Nodes (cluster snapshot)")
    p.add_argument("--explain", action="store_true", help="say why templates were chosen or rejected")
    p.add_argument("--kind", action="append", help="only report objects of this kind (repeatable)")
    p.add_argument("--operator-namespace", default="aim-system")
    p.add_argument("--gpu-preference", default=None, metavar="MODELS", help=_GPU_PREFERENCE_HELP)
    p.set_defaults(func=_cmd_render)

    p = sub.add_parser("tags", help="list the images a model-source filter would match (same code as the controller)")
    p.add_argument("repo", help="filter image: org/repo, org/repo*, org/repo:tag or host/org/repo...")
    p.add_argument("--registry", default=None, help="registry of a REPO without host (spec.registry; docker.io)")
    p.add_argument("--versions", action="append", metavar="CONSTRAINT", help="semver constraint (repeatable)")
    p.add_argument("--exclude", action="append", metavar="REPOSITORY", help="repository to skip (repeatable)")
    p.add_argument("--pull-secret", metavar="FILE", help="docker config JSON with credentials")
    p.add_argument("--json", action="store_true", help="print JSON instead of one image per line")
    p.set_defaults(func=_cmd_tags)

    p = sub.add_parser("inspect", help="read an image's labels and recommended deployments from its registry")
    p.add_argument("image", help="image reference, e.g. amdenterpriseai/aim-qwen-qwen3-32b:0.8.5 or ghcr.io/org/x:1")
    p.add_argument("--pull-secret", metavar="FILE", help="docker config JSON with credentials")
    p.add_argument("--json", action="store_true", help="print JSON (imageMetadata as the model status holds it)")
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("artifact", help="the artifact downloader (entrypoints of the download and check-size Jobs)")
    art = p.add_subparsers(dest="artifact_command", required=True)
    a = art.add_parser("download", help="download an hf:// or s3:// source into TARGET_DIR, reporting to the artifact")
    a.add_argument("source_uri", help="hf://<org>/<model>[@<revision>] or s3://<bucket>/<prefix>")
    a.set_defaults(func=_cmd_artifact_download)
    a = art.add_parser("check-size", help='print {"url": ..., "sizeBytes": N} for a source (last output line)')
    a.add_argument("source_uri", help="hf://<org>/<model>[@<revision>] or s3://<bucket>/<prefix>")
    a.set_defaults(func=_cmd_artifact_check_size)

    p = sub.add_parser("run", help="run the operator against the current kubeconfig or in-cluster config")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="watch all namespaces (default)")
    scope.add_argument("-n", "--namespace", action="append", default=[], help="watch this namespace (repeatable)")
    p.add_argument("--operator-namespace", default=None, help="namespace for operator-owned objects (F16)")
    p.add_argument("--liveness", default=None, metavar="URL", help="serve a liveness probe, e.g. http://0.0.0.0:8081/healthz")
    p.add_argument(
        "--leader-elect",
        action="store_true",
        help="run several replicas safely: all watch, only the holder of the leader Lease reconciles",
    )
    p.add_argument("--workers", type=int, default=4, help="concurrent reconciles")
    p.add_argument("--resync-seconds", type=float, default=600.0,
                   help="list everything again this often to forget objects deleted during a watch gap (0: never)")
    p.add_argument("--gpu-preference", default=None, metavar="MODELS", help=_GPU_PREFERENCE_HELP)
    p.add_argument("--artifact-download-image", default=None, metavar="IMAGE",
                   help="image of artifact size-check and download Jobs when an artifact names none "
                        "(default: $AIM_ARTIFACT_DOWNLOAD_IMAGE, else ghcr.io/silogen/aim-artifact-downloader:0.2.0)")
    p.add_argument("--log-format", choices=["json", "plain"], default="json")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=_cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from aim_core.plugins import PluginError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except PluginError as exc:
        sys.stderr.write(f"aim-engine: {exc}\n")
        return 2
    except BrokenPipeError:  # e.g. `aim-engine crds | head`: the reader left, nothing to report
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
