"""Operator settings resolved from flags and the environment (F16)."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
DEFAULT_OPERATOR_NAMESPACE = "aim-system"
ENDPOINT_PICKER_IMAGE_ENV = "AIM_ENDPOINT_PICKER_IMAGE"  # read by the route builder

# Delays between attempts of a failing API request of a watch stream (kopf's and ours): 38 s in all,
# more than an API server restart usually takes, before kopf reports the request as failed.
ERROR_BACKOFFS = [1, 2, 5, 10, 20]


def operator_namespace(explicit: str | None = None, *, sa_file: Path = SERVICE_ACCOUNT_NAMESPACE) -> str:
    """``--operator-namespace``, else ``AIM_SYSTEM_NAMESPACE``, else the pod's namespace, else ``aim-system``."""
    if explicit:
        return explicit
    env = os.environ.get("AIM_SYSTEM_NAMESPACE", "").strip()
    if env:
        return env
    try:
        text = sa_file.read_text().strip()
    except OSError:
        text = ""
    return text or DEFAULT_OPERATOR_NAMESPACE


def gpu_preference(explicit: str | None = None) -> tuple[str, ...]:
    """``--gpu-preference``, else ``AIM_GPU_PREFERENCE``: comma-separated GPU models, best first."""
    text = explicit if explicit is not None else os.environ.get("AIM_GPU_PREFERENCE", "")
    return tuple(part.strip() for part in text.split(",") if part.strip())


@attrs.frozen
class Settings:
    namespaces: tuple[str, ...] = ()  # empty: all namespaces
    operator_namespace: str = DEFAULT_OPERATOR_NAMESPACE
    # Reconciles in flight. A reconcile mostly waits for the API server (one request at a time), so a worker is
    # a coroutine costing next to nothing while it waits; too few and a burst of new objects waits in our queue
    # instead of being served. On kube-apiserver 1.24 (2 cores), 300 new services: p99 3.2-5.4 s with 16, 1.9-2.2 s
    # with 32, 1.4-2.5 s with 64, the same wall time (docs/configuration.md, benchmarks/README.md).
    workers: int = 64
    leader_election: bool = False
    # client-go's leaderelection durations (seconds): a standby takes the lease a lease duration after it saw it
    # last change; the leader stops if it could not renew for the renew deadline; both try every retry period.
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    liveness: str | None = None
    # Periodic full re-listing, a stream at a time; 0 = never. Not needed for correctness: a stream resumes from
    # its last version after an error (the server replays deletions too) or, after 410 Gone, lists again.
    resync_seconds: float = 0.0
    gpu_preference: tuple[str, ...] = ()  # GPU models best first for template selection; empty: the vendors' (2.11)
    artifact_download_image: str | None = None  # None: AIM_ARTIFACT_DOWNLOAD_IMAGE, else the upstream downloader
    # image of the endpoint pickers of inference pools (routing.inferencePool); None: AIM_ENDPOINT_PICKER_IMAGE,
    # else the route builder's pinned release
    endpoint_picker_image: str | None = None
    # HOST:PORT or :PORT of /metrics and of /healthz + /readyz; "0": off (the CLI defaults are :8080 and :8081)
    metrics_bind_address: str = "0"
    health_probe_bind_address: str = "0"
    # /metrics over HTTPS with TokenReview + SubjectAccessReview (the CLI's default, as upstream's); False: plain HTTP
    metrics_secure: bool = False
    metrics_cert_path: str | None = None  # directory of the serving certificate; None: a self-signed one
    metrics_cert_name: str = "tls.crt"
    metrics_cert_key: str = "tls.key"
    # the kubeconfig file and context to log in with (None: $KUBECONFIG or ~/.kube/config, the current context;
    # in a pod without either, the service account)
    kubeconfig: str | None = None
    context: str | None = None
