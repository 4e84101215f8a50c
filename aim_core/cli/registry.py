"""``aim-engine tags`` and ``aim-engine inspect``: registries, read through the controllers' own code."""

from __future__ import annotations

import argparse
import sys

from aim_core.cli.common import add_output_option, command_parser, error
from aim_core.cli.progress import stderr_progress


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "tags",
        "list the images a model-source filter would match (same code as the controller)",
        [
            "aim-engine tags 'amdenterpriseai/aim-qwen*' --versions '>=0.8'",
            "aim-engine tags ghcr.io/org/repo --pull-secret ~/.docker/config.json -o json",
        ],
    )
    p.add_argument("repo", help="filter image: org/repo, org/repo*, org/repo:tag or host/org/repo...")
    p.add_argument("--registry", default=None, help="registry of a REPO without host (spec.registry; docker.io)")
    p.add_argument("--versions", action="append", metavar="CONSTRAINT", help="semver constraint (repeatable)")
    p.add_argument("--exclude", action="append", metavar="REPOSITORY", help="repository to skip (repeatable)")
    p.add_argument("--pull-secret", metavar="FILE", help="docker config JSON with credentials")
    add_output_option(p, ["text", "json"], "text (default): one image per line; json")
    p.add_argument("--json", dest="output", action="store_const", const="json", help=argparse.SUPPRESS)
    p.set_defaults(func=tags)

    p = command_parser(
        sub,
        "inspect",
        "read an image's labels and recommended deployments from its registry",
        ["aim-engine inspect amdenterpriseai/aim-qwen-qwen3-32b:0.8.5", "aim-engine inspect ghcr.io/org/x:1 -o json"],
    )
    p.add_argument("image", help="image reference, e.g. amdenterpriseai/aim-qwen-qwen3-32b:0.8.5 or ghcr.io/org/x:1")
    p.add_argument("--pull-secret", metavar="FILE", help="docker config JSON with credentials")
    add_output_option(p, ["text", "json"], "text (default); json: imageMetadata as the model status holds it")
    p.add_argument("--json", dest="output", action="store_const", const="json", help=argparse.SUPPRESS)
    p.set_defaults(func=inspect)


def _check_pull_secret(path: str | None) -> None:
    """An unreadable --pull-secret file is named as every unreadable input is (exit 2)."""
    if path:
        from aim_core.cli.inputs import read_text

        read_text(path, stdin_ok=False)


def tags(args: argparse.Namespace) -> int:
    import asyncio

    _check_pull_secret(args.pull_secret)
    from aim_core.modelsource.preview import format_preview, preview
    from aim_core.plugin.manager import get_plugin_manager

    try:
        with stderr_progress("listing", total=None) as step:
            selector, result = asyncio.run(
                preview(
                    get_plugin_manager(),
                    args.repo,
                    registry=args.registry,
                    versions=args.versions or (),
                    exclude=args.exclude or (),
                    docker_config=args.pull_secret,
                    on_request=step,
                )
            )
    except (OSError, ValueError) as exc:  # unreadable --pull-secret file or docker config
        error(str(exc))
        return 2
    sys.stdout.write(format_preview(selector, result, as_json=args.output == "json"))
    for failure in result.failures:
        error(f"{selector.text}: {failure.reason}: {failure.message}")
    return 1 if result.failures else 0


def inspect(args: argparse.Namespace) -> int:
    import asyncio

    _check_pull_secret(args.pull_secret)
    from aim_core.cli.inspection import format_inspection, inspect_image
    from aim_core.plugin.manager import get_plugin_manager
    from aim_core.registry import InvalidImageReference, InvalidPullSecret, RegistryError

    try:
        result = asyncio.run(inspect_image(get_plugin_manager(), args.image, docker_config=args.pull_secret))
    except (OSError, InvalidImageReference, InvalidPullSecret) as exc:
        error(str(exc))
        return 2
    except RegistryError as exc:
        error(f"{exc.reason}: {exc}")
        return 1
    sys.stdout.write(format_inspection(result, as_json=args.output == "json"))
    if result.label_error:
        error(f"the labels cannot be read as AIM metadata: {result.label_error}")
        return 1
    return 0
