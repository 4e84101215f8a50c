"""``aim-engine run``: the operator against the current kubeconfig or in-cluster config.

The flags become :class:`aim_core.operator.settings.Settings` in
:func:`aim_core.operator.run.settings_from_args`; add a flag here and read it there.
"""

from __future__ import annotations

import argparse

from aim_core.cli.common import GPU_PREFERENCE_HELP, add_cluster_options, command_parser


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "run",
        "run the operator against the current kubeconfig or in-cluster config",
        [
            "aim-engine run                                   # the current kubeconfig context, all namespaces",
            "aim-engine run --kubeconfig ~/.kube/dev --context dev -n team-a --log-format plain",
            "aim-engine run --leader-elect --metrics-bind-address :8443",
        ],
        codes="Exit status: 0 stopped (SIGTERM); 1 no usable credentials, or a port cannot be bound; "
        "2 bad usage or an unreadable --kubeconfig; 130 interrupted.",
    )
    add_cluster_options(p)
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="watch all namespaces (default)")
    scope.add_argument("-n", "--namespace", action="append", default=[], help="watch this namespace (repeatable)")
    p.add_argument("--operator-namespace", default=None, help="namespace for operator-owned objects (F16)")
    p.add_argument(
        "--liveness",
        default=None,
        metavar="URL",
        help="older form of --health-probe-bind-address: serve the probes on this URL's host and port "
        "(its path answers as /healthz does), e.g. http://0.0.0.0:8081/healthz",
    )
    p.add_argument(
        "--leader-elect",
        action="store_true",
        help="run several replicas safely: all watch, only the holder of the leader Lease reconciles",
    )
    p.add_argument(
        "--leader-elect-lease-duration",
        type=seconds,
        default=15.0,
        metavar="DURATION",
        help="how long a standby waits after the lease last changed before it takes it (default 15s)",
    )
    p.add_argument(
        "--leader-elect-renew-deadline",
        type=seconds,
        default=10.0,
        metavar="DURATION",
        help="the leader stops reconciling when it could not renew the lease for this long; "
        "shorter than the lease duration (default 10s)",
    )
    p.add_argument(
        "--leader-elect-retry-period",
        type=seconds,
        default=2.0,
        metavar="DURATION",
        help="how often the leader renews and a standby tries to take the lease (default 2s)",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=64,
        help="concurrent reconciles (each waits on the API server most of its time; default 64)",
    )
    p.add_argument(
        "--resync-seconds",
        type=float,
        default=0.0,
        help="also list everything again this often (default 0: never; streams resume after "
        "errors and list again after 410 Gone by themselves); an API the cluster lacks is looked "
        "for again with backoff, at most this far apart (600 s when 0)",
    )
    p.add_argument("--gpu-preference", default=None, metavar="MODELS", help=GPU_PREFERENCE_HELP)
    p.add_argument(
        "--artifact-download-image",
        default=None,
        metavar="IMAGE",
        help="image of artifact size-check and download Jobs when an artifact names none "
        "(default: $AIM_ARTIFACT_DOWNLOAD_IMAGE, else ghcr.io/silogen/aim-artifact-downloader:0.2.0)",
    )
    p.add_argument(
        "--endpoint-picker-image",
        default=None,
        metavar="IMAGE",
        help="image of the endpoint pickers of services with routing.inferencePool on (default: "
        "$AIM_ENDPOINT_PICKER_IMAGE, else registry.k8s.io/gateway-api-inference-extension/epp:v1.3.0)",
    )
    p.add_argument(
        "--metrics-bind-address",
        default=":8443",
        metavar="ADDR",
        help="serve Prometheus metrics at /metrics on HOST:PORT or :PORT (0: off; default :8443)",
    )
    p.add_argument(
        "--metrics-secure",
        nargs="?",
        const=True,
        default=True,
        type=boolean,
        metavar="BOOL",
        help="serve /metrics over HTTPS to clients the API server authenticates (TokenReview) and "
        "allows to get /metrics (SubjectAccessReview); --metrics-secure=false: plain HTTP, "
        "to anyone who reaches the port (default true)",
    )
    p.add_argument(
        "--metrics-cert-path",
        default="",
        metavar="DIR",
        help="directory of the metrics server's certificate and key (default: a self-signed one)",
    )
    p.add_argument(
        "--metrics-cert-name",
        default="tls.crt",
        metavar="FILE",
        help="the certificate's file in --metrics-cert-path (default tls.crt)",
    )
    p.add_argument(
        "--metrics-cert-key",
        default="tls.key",
        metavar="FILE",
        help="the key's file in --metrics-cert-path (default tls.key)",
    )
    p.add_argument(
        "--health-probe-bind-address",
        default=":8081",
        metavar="ADDR",
        help="serve /healthz and /readyz on HOST:PORT or :PORT (0: off; default :8081)",
    )
    p.add_argument("--log-format", choices=["json", "plain"], default="json")
    p.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        default=None,
        help="default: $AIM_ENGINE_LOG_LEVEL, else info",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="the same as --log-level debug")
    p.set_defaults(func=command)


def boolean(text: str) -> bool:
    """``true``/``false`` (and 1/0, yes/no), as Go's boolean flags take them after ``=``."""
    value = text.strip().lower()
    if value in ("true", "1", "yes", "t"):
        return True
    if value in ("false", "0", "no", "f"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not true or false")


def positive_int(text: str) -> int:
    """A count of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: at least 1")
    return value


def seconds(text: str) -> float:
    """A duration as kube-controller-manager's flags take it: ``15s``, ``1m``, ``500ms``, or plain seconds."""
    value = text.strip()
    for suffix, scale in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if value.endswith(suffix) and value[: -len(suffix)].replace(".", "", 1).isdigit():
            return float(value[: -len(suffix)]) * scale
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (e.g. 15s, 500ms, 1m)") from None


def command(args: argparse.Namespace) -> int:
    from aim_core.cli.common import error, login
    from aim_core.operator.login import LoginError

    # before the operator loop: without credentials kopf would retry its login forever, with tracebacks
    try:
        login(args.kubeconfig, args.context, in_cluster_first=True, isolated=True)  # the operator's own process
    except LoginError as exc:
        error(str(exc))
        return 1
    from aim_core.operator.run import run

    return run(args)
