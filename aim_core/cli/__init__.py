"""The ``aim-engine`` command.

One module per subcommand, each with a ``register(subparsers)`` that adds its
parser and points it at the function that runs it. Heavy imports happen
inside those functions, so ``aim-engine --help`` and the parser-only tests
stay quick:

========================  ===============================================================
``run``                   :mod:`aim_core.cli.run` -- the operator
``crds``, ``plugins``     :mod:`aim_core.cli.info` -- what this installation serves
``render``                :mod:`aim_core.cli.render` -- the planners over files, offline
``tags``, ``inspect``     :mod:`aim_core.cli.registry` -- registries, through the controller code
``doctor``                :mod:`aim_core.cli.doctor` -- is the cluster ready, and how to fix it
``describe``              :mod:`aim_core.cli.describe` -- one service's chain, live
``templates clone``       :mod:`aim_core.cli.templates` -- copies of a GPU's templates for another GPU
``apply``                 :mod:`aim_core.cli.apply` -- apply manifests, optionally with their status
``artifact``              :mod:`aim_core.cli.artifact` -- the downloader Jobs' entrypoints
``bench``                 :mod:`aim_core.cli.bench` -- benchmark results: tables, comparisons, plots
========================  ===============================================================
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from aim_core.cli import apply, artifact, bench, describe, doctor, info, registry, render, run, templates

__all__ = ["build_parser", "main"]

# Order of the subcommands in ``aim-engine --help``.
_COMMANDS = (info, render, registry, doctor, describe, bench, templates, apply, artifact, run)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aim-engine",
        description="AIM Engine: the operator and its tools for aim.eai.amd.com/v1alpha1.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from aim_core.plugin.manager import PluginError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except PluginError as exc:
        sys.stderr.write(f"aim-engine: {exc}\n")
        return 2
    except BrokenPipeError:  # e.g. `aim-engine crds | head`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
