"""``aim-engine doctor``: check the cluster for what AIM services need, and say how to fix what is missing."""

from __future__ import annotations

import argparse
import json
import sys

from aim_core.cli.common import (
    add_cluster_options,
    add_output_option,
    cluster_client,
    command_parser,
    error,
    stdout_console,
)
from aim_core.cli.progress import stderr_progress

DEFAULT_SERVICE_ACCOUNT = "aim-engine-controller-manager"
_STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red"}  # by Finding.level; printed upper-case


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "doctor",
        "check the cluster (CRDs, KServe mode, GPU nodes, operator RBAC) and say how to fix what is missing",
        ["aim-engine doctor", "aim-engine doctor --context staging --strict", "aim-engine doctor -o json"],
        codes="Exit status: 0 all is well; 1 something needs fixing (with --strict, warnings too), or the "
        "cluster cannot be reached or logged in to; 2 bad usage or an unreadable --kubeconfig.",
    )
    add_cluster_options(p)
    add_output_option(p, ["text", "json"])
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.add_argument(
        "--operator-namespace",
        default=None,
        help="namespace the operator runs in (default: $AIM_SYSTEM_NAMESPACE, else aim-system)",
    )
    p.add_argument(
        "--service-account",
        default=DEFAULT_SERVICE_ACCOUNT,
        help=f"the operator's ServiceAccount (default {DEFAULT_SERVICE_ACCOUNT})",
    )
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    import asyncio

    from aim_core.doctor import diagnose, exit_code
    from aim_core.operator.login import LoginError
    from aim_core.operator.settings import operator_namespace
    from aim_core.plugin.manager import get_plugin_manager
    from aim_core.reconcile.errors import NetworkError

    plugins = get_plugin_manager()
    namespace = operator_namespace(args.operator_namespace)

    async def go() -> list:
        async with cluster_client(args) as cluster:
            with stderr_progress("checking the cluster", total=None) as step:
                return await diagnose(
                    cluster, plugins, operator_namespace=namespace, service_account=args.service_account, on_step=step
                )

    try:
        sections = asyncio.run(go())
    except NetworkError as exc:
        error(f"cannot reach the API server: {exc}")
        return 1
    except LoginError as exc:
        error(str(exc))
        return 1
    code = exit_code(sections, strict=args.strict)
    if args.output == "json":
        json.dump(
            {
                "ok": code == 0,
                "sections": [
                    {
                        "title": s.title,
                        "level": s.level,
                        "findings": [
                            {"level": f.level, "message": f.message, **({"fix": f.fix} if f.fix else {})}
                            for f in s.findings
                        ],
                    }
                    for s in sections
                ],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
        return code
    print_text(sections, code)
    return code


def print_text(sections: list, code: int) -> None:
    from rich.markup import escape

    console = stdout_console()
    counts = {"ok": 0, "warn": 0, "fail": 0}
    for section in sections:
        console.print(f"[bold]{escape(section.title)}[/bold]", soft_wrap=True)
        for finding in section.findings:
            counts[finding.level] = counts.get(finding.level, 0) + 1
            style = _STYLES.get(finding.level, "bold")
            console.print(f"  [{style}]{finding.level.upper():<4}[/{style}]  {escape(finding.message)}", soft_wrap=True)
            if finding.fix:
                console.print(f"        fix: [cyan]{escape(finding.fix)}[/cyan]", soft_wrap=True)
    verdict = "all is well" if code == 0 else "something needs fixing"
    console.print(
        f"\n{counts['fail']} failed, {counts['warn']} warning(s), {counts['ok']} OK: {verdict}", soft_wrap=True
    )
