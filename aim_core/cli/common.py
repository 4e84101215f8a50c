"""What several subcommands share: help texts, errors, the cluster client, terminal output."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

GPU_PREFERENCE_HELP = (
    "GPU models best first for template auto-selection, comma-separated (e.g. MI355X,MI350X,MI325X,MI300X); "
    "models left out rank last, equal; default: $AIM_GPU_PREFERENCE, else upstream's MI325X,MI300X,MI250X,MI210"
)


def error(message: str) -> None:
    """One line on stderr, prefixed with the program name."""
    sys.stderr.write(f"aim-engine: {message}\n")


# --------------------------------------------------------------------------- the parsers

EXIT_CODES = (
    "Exit status: 0 done; 1 the command ran and found a problem (or could not reach the cluster); "
    "2 bad usage or unreadable input."
)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs keep their lines (the examples); option help wraps as usual."""


def epilog(examples: Sequence[str], *, codes: str = EXIT_CODES, extra: str = "") -> str:
    """The end of a ``--help``: examples, then what the exit status means."""
    import textwrap

    lines = ["Examples:", *(f"  {e}" for e in examples), ""]
    if extra:
        lines += [*textwrap.wrap(extra, 100), ""]
    lines += textwrap.wrap(codes, 100)
    return "\n".join(lines)


def _choices_text(choices: Sequence[str]) -> str:
    return ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else "".join(choices)


class CliParser(argparse.ArgumentParser):
    """argparse, with errors that name what is expected instead of the parser's internal names.

    ``aim-engine bench`` says ``missing the command: show, compare or sweep`` (not
    ``required: bench_command``); a misspelt command gets a "did you mean".
    """

    def _commands(self) -> list[str]:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return list(action.choices)
        return []

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        import difflib
        import re

        commands = self._commands()
        if commands and "the following arguments are required" in message and "COMMAND" in message:
            message = f"missing the command: {_choices_text(commands)}"
        elif m := re.match(r"argument (\S+): invalid choice: '([^']*)'", message):
            options = [str(c) for c in re.findall(r"'([^']*)'", message.split("choose from", 1)[-1])]
            close = difflib.get_close_matches(m[2], options, n=1)
            what = (
                "unknown command" if m[1] == "COMMAND" else "unknown value" if "|" in m[1] else f"{m[1]}: unknown value"
            )
            message = f"{what} {m[2]!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
            message += f"; choose {_choices_text(options)}"
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def command_parser(
    sub: argparse._SubParsersAction, name: str, help: str, examples: Sequence[str], **kwargs: Any
) -> argparse.ArgumentParser:
    """A subcommand's parser with its examples and exit codes at the end of ``--help``."""
    kwargs.setdefault("description", help[0].upper() + help[1:] + ".")
    codes = kwargs.pop("codes", EXIT_CODES)
    return sub.add_parser(
        name, help=help, formatter_class=HelpFormatter, epilog=epilog(examples, codes=codes), **kwargs
    )


def subcommands(parser: argparse.ArgumentParser, dest: str) -> argparse._SubParsersAction:
    """The subparsers of a command with subcommands (``bench show``), named ``COMMAND`` in errors."""
    return parser.add_subparsers(dest=dest, required=True, metavar="COMMAND", parser_class=CliParser)


def add_filename_option(parser: argparse.ArgumentParser, help: str, *, required: bool = False) -> None:
    """``-f/--filename`` as every command spells it (``--file`` still read)."""
    parser.add_argument(
        "-f",
        "--filename",
        "--file",
        dest="filename",
        action="append",
        required=required,
        default=None if required else [],
        metavar="PATH",
        help=help + "; a file, a directory (its .yaml, .yml and .json files) or - for stdin (repeatable)",
    )


def add_output_option(parser: argparse.ArgumentParser, choices: Sequence[str], help: str = "") -> None:
    """``-o/--output FORMAT``, the first choice the default."""
    parser.add_argument(
        "-o",
        "--output",
        choices=list(choices),
        default=choices[0],
        metavar="|".join(choices),
        help=help or f"output format (default {choices[0]})",
    )


class VersionAction(argparse.Action):
    """``--version``: the text is made only when asked for (it may run git)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        sys.stdout.write(version_text() + "\n")
        parser.exit(0)


def version_text() -> str:
    """``aim-engine 0.1.0`` and the git commit of the checkout it runs from, when known."""
    import subprocess
    from importlib import metadata
    from pathlib import Path

    try:
        version = metadata.version("aim-engine")
    except metadata.PackageNotFoundError:
        version = "unknown"
    text = f"aim-engine {version}"
    root = Path(__file__).resolve().parents[2]
    if (root / ".git").exists():
        try:
            commit = subprocess.run(
                ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            commit = ""
        if commit:
            text += f" (commit {commit})"
    import platform

    return f"{text}, Python {platform.python_version()}"


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


def kubeconfig_paths(kubeconfig: str | None) -> list[str]:
    """The kubeconfig files the client would read: ``--kubeconfig``, else each of ``$KUBECONFIG``, else
    ``~/.kube/config`` when it exists."""
    import os

    if kubeconfig:
        return [kubeconfig]
    if os.environ.get("KUBECONFIG"):
        return [p for p in os.environ["KUBECONFIG"].split(os.pathsep) if p]
    default = os.path.expanduser("~/.kube/config")
    return [default] if os.path.exists(default) else []


def login(
    kubeconfig: str | None, context: str | None, *, in_cluster_first: bool = False, isolated: bool = False
) -> Any:
    """Credentials for ``--kubeconfig``/``--context``, as ``run``, ``doctor`` and the other cluster commands
    read them, with one message for each way they can be missing.

    :raises aim_core.cli.inputs.InputError: a kubeconfig file that cannot be read or parsed (exit 2).
    :raises aim_core.operator.login.LoginError: no usable configuration (exit 1), saying what to do.
    """
    import os

    from aim_core.cli.inputs import kubeconfig_problem
    from aim_core.operator.login import LoginError, credentials

    paths = kubeconfig_paths(kubeconfig)
    for path in paths:
        if kubeconfig or os.path.exists(path):  # a $KUBECONFIG entry that does not exist is skipped, as kubectl does
            problem = kubeconfig_problem(path)
            if problem:
                raise LoginError(f"cannot use the kubeconfig {problem}")
    said = _Said()  # the kubernetes client logs what an exec plugin said on the root logger: into our line
    root = logging.getLogger()
    root.addHandler(said)
    try:
        found = credentials(kubeconfig, context, in_cluster_first=in_cluster_first, isolated=isolated)
        for line in said.lines:  # e.g. an exec plugin that could not run: the server will say 401 next
            sys.stderr.write(f"aim-engine: warning: kubeconfig: {line}\n")
        return found
    except LoginError as exc:
        if said.lines:
            raise LoginError(f"{exc} ({'; '.join(said.lines)})") from exc
        existing = [p for p in paths if os.path.exists(p)]
        if not (kubeconfig or context) and existing:
            import re

            cause = re.match(r"no kubeconfig \((.*)\) and not in a cluster", str(exc))
            raise LoginError(
                f"cannot use the kubeconfig {os.pathsep.join(existing)}: {cause[1] if cause else exc}"
            ) from exc
        if not (kubeconfig or context):
            where = (
                "$KUBECONFIG (" + os.environ["KUBECONFIG"] + ")" if os.environ.get("KUBECONFIG") else "~/.kube/config"
            )
            raise LoginError(
                f"no cluster credentials: no kubeconfig at {where} and not running in a pod; "
                "pass --kubeconfig FILE (and --context NAME) or set KUBECONFIG"
            ) from exc
        raise
    except Exception as exc:  # noqa: BLE001 - the client's loader fails in many ways on a malformed file
        named = kubeconfig or os.pathsep.join(paths) or "~/.kube/config"
        more = f" ({'; '.join(said.lines)})" if said.lines else ""
        raise LoginError(
            f"cannot use the kubeconfig {named}{' context ' + context if context else ''}: "
            f"{type(exc).__name__}: {exc}{more}"
        ) from exc
    finally:
        root.removeHandler(said)


class _Said(logging.Handler):
    """Collects the messages logged while credentials are read."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage().strip()
        if text:
            self.lines.append(text.splitlines()[0][:200])


@contextlib.asynccontextmanager
async def cluster_client(args: argparse.Namespace) -> AsyncIterator[Any]:
    """The API client for ``--kubeconfig``/``--context`` (the same adapter the operator uses).

    :raises aim_core.operator.login.LoginError: no usable configuration.
    :raises aim_core.cli.inputs.InputError: an unreadable kubeconfig file.
    """
    from aim_core.kube import Kube

    client = Kube(login(args.kubeconfig, args.context))
    try:
        yield client
    finally:
        await client.aclose()


def on_cluster(args: argparse.Namespace, work: Callable[[Any], Awaitable[T]]) -> T | None:
    """``work(client)`` with the client of :func:`cluster_client`; ``None`` when the login, the network or
    the API server failed, which is said on stderr in one line.

    :raises aim_core.cli.inputs.InputError: an unreadable kubeconfig file.
    """
    import asyncio

    from aim_core.operator.login import LoginError
    from aim_core.reconcile.errors import ApiError, NetworkError

    async def go() -> T:
        async with cluster_client(args) as cluster:
            return await work(cluster)

    try:
        return asyncio.run(go())
    except LoginError as exc:
        error(str(exc))
    except NetworkError as exc:
        error(f"cannot reach the API server: {exc}")
    except ApiError as exc:
        error(f"the API server refused: {exc}")
    return None


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
