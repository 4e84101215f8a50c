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
``completion``            :mod:`aim_core.cli.completion` -- shell completion for bash, zsh and fish
========================  ===============================================================

Every file the commands read goes through :mod:`aim_core.cli.inputs`. Errors are one line on
stderr starting ``aim-engine:``; exit 2 for bad input (usage, files), 1 when the command ran and
found something wrong. A traceback is printed only with ``-v`` or ``AIM_ENGINE_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from aim_core.cli import (
    apply,
    artifact,
    bench,
    completion,
    describe,
    doctor,
    info,
    registry,
    render,
    run,
    templates,
)
from aim_core.cli.common import CliParser, HelpFormatter, VersionAction, epilog, error

__all__ = ["build_parser", "main"]

# Order of the subcommands in ``aim-engine --help``.
_COMMANDS = (info, render, registry, doctor, describe, bench, templates, apply, artifact, run, completion)
DEBUG_ENV = "AIM_ENGINE_DEBUG"


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(
        prog="aim-engine",
        description="AIM Engine: the operator and its tools for aim.eai.amd.com/v1alpha1.",
        formatter_class=HelpFormatter,
        epilog=epilog(
            [
                "aim-engine render -f examples            # plan the bundled examples offline",
                "aim-engine doctor                        # is the cluster ready for AIM services?",
                "aim-engine run --kubeconfig ~/.kube/config",
                "source <(aim-engine completion bash)     # tab completion",
            ],
            extra=f"Set {DEBUG_ENV}=1 (or pass -v before the command) to see a traceback on an unexpected error.",
        ),
    )
    parser.add_argument("--version", action=VersionAction, help="print the version (and git commit) and exit")
    parser.add_argument(
        "-v",
        "--debug",
        dest="debug",
        action="store_true",
        help=f"print a traceback when something unexpected fails (also {DEBUG_ENV}=1)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=CliParser)
    for module in _COMMANDS:
        module.register(sub)
    parser.set_defaults(root_parser=parser)  # for `completion`, which describes the whole parser
    return parser


def _debugging(args: argparse.Namespace | None) -> bool:
    if os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    return bool(args is not None and (getattr(args, "debug", False) or getattr(args, "verbose", False)))


def main(argv: Sequence[str] | None = None) -> int:
    from aim_core.cli.inputs import InputError

    args = None
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except InputError as exc:
        error(str(exc))
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return 130
    except BrokenPipeError:  # e.g. `aim-engine crds | head`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, not a traceback
        from aim_core.plugin.manager import PluginError

        if isinstance(exc, PluginError):
            error(str(exc))
            return 2
        if _debugging(args):
            import traceback

            traceback.print_exc()
        text = str(exc).strip().splitlines()
        error(
            f"unexpected {type(exc).__name__}: {text[0] if text else 'no details'}"
            + ("" if _debugging(args) else f" (run with -v or {DEBUG_ENV}=1 for the traceback)")
        )
        return 1
