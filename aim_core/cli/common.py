"""What several subcommands share: help texts, errors, the cluster client, terminal output."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

GPU_PREFERENCE_HELP = (
    "GPU models best first for template auto-selection, comma-separated (e.g. MI355X,MI350X,MI325X,MI300X); "
    "models left out rank last, equal; default: $AIM_GPU_PREFERENCE, else upstream's MI325X,MI300X,MI250X,MI210"
)


def error(message: str) -> None:
    """One line on stderr, prefixed with the program name."""
    sys.stderr.write(f"aim-engine: {message}\n")


# --------------------------------------------------------------------------- the cluster


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """``--kubeconfig`` and ``--context``, for commands that read a live cluster."""
    parser.add_argument(
        "--kubeconfig",
        default=None,
        metavar="FILE",
        help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)",
    )
    parser.add_argument("--context", default=None, help="kubeconfig context (default: the current one)")


@contextlib.asynccontextmanager
async def cluster_client(args: argparse.Namespace) -> AsyncIterator[Any]:
    """The API client for ``--kubeconfig``/``--context`` (the same adapter the operator uses).

    :raises aim_core.operator.login.LoginError: no usable configuration.
    """
    from aim_core.kube import Kube
    from aim_core.operator.login import credentials

    client = Kube(credentials(args.kubeconfig, args.context))
    try:
        yield client
    finally:
        await client.aclose()


# --------------------------------------------------------------------------- the terminal


def stdout_console() -> Any:
    """A rich Console on stdout: colours on a terminal (unless NO_COLOR is set), plain text when piped.

    Piped, lines are never cut or wrapped (rich would fit them to 80 columns), so a
    script or ``grep`` sees whole lines.
    """
    from rich.console import Console

    console = Console(file=sys.stdout, highlight=False)
    if not console.is_terminal:
        console = Console(file=sys.stdout, highlight=False, width=1_000_000)
    return console


@contextlib.contextmanager
def stderr_progress(description: str, total: float | None = None) -> Iterator[Callable[..., None]]:
    """A progress display on stderr while the block runs, only when stderr is a terminal.

    Yields ``step(text=None, advance=1)``: names what is being done now and
    counts one more done. When stderr is piped or redirected it does nothing.
    """
    if not sys.stderr.isatty():
        yield lambda *args, **kwargs: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as progress:
        task = progress.add_task(description, total=total)

        def step(text: str | None = None, advance: float = 1) -> None:
            progress.update(task, description=f"{description}: {text}" if text else description, advance=advance)

        yield step
