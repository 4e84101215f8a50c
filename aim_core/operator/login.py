"""Credentials for the CLI's cluster commands (``doctor``, ``describe``).

The same sources as ``aim-engine run`` (the kubernetes client, so exec and
auth-provider plugins of a kubeconfig work): a kubeconfig file (``--kubeconfig``,
else ``$KUBECONFIG``, else ``~/.kube/config``) and its context (``--context``,
else the current one); without a kubeconfig and without explicit choices,
the pod's service account.
"""

from __future__ import annotations

import os
from pathlib import Path

from aim_core.kube import Credentials

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class LoginError(Exception):
    """No usable kubeconfig or in-cluster configuration."""


def credentials(kubeconfig: str | None = None, context: str | None = None) -> Credentials:
    """Credentials of the chosen kubeconfig context, else of the pod's service account.

    :raises LoginError: saying what was tried.
    """
    import kubernetes.client
    import kubernetes.config

    config = kubernetes.client.Configuration()
    namespace: str | None = None
    # the client reads $KUBECONFIG once, when imported; read it now
    path = kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    try:
        kubernetes.config.load_kube_config(config_file=path, context=context, client_configuration=config,
                                           persist_config=False)
        _contexts, active = kubernetes.config.list_kube_config_contexts(config_file=path)
        chosen = active
        if context:
            chosen = next((c for c in _contexts if c.get("name") == context), active)
        namespace = ((chosen or {}).get("context") or {}).get("namespace")
    except (kubernetes.config.ConfigException, OSError) as kube_error:
        if kubeconfig or context:
            raise LoginError(f"cannot use the kubeconfig{' ' + kubeconfig if kubeconfig else ''}"
                             f"{' context ' + context if context else ''}: {kube_error}") from kube_error
        try:
            kubernetes.config.load_incluster_config(client_configuration=config)
        except kubernetes.config.ConfigException as cluster_error:
            raise LoginError(f"no kubeconfig ({kube_error}) and not in a cluster ({cluster_error}); "
                             "pass --kubeconfig or set KUBECONFIG") from cluster_error
        try:
            namespace = SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
        except OSError:
            namespace = None
    header = config.get_api_key_with_prefix("BearerToken") or config.get_api_key_with_prefix("authorization")
    token = header.split(" ", 1)[-1] if header else None
    return Credentials(
        server=config.host,
        token=token,
        ca_path=config.ssl_ca_cert,
        certificate_path=config.cert_file,
        private_key_path=config.key_file,
        username=config.username or None,
        password=config.password or None,
        insecure=not config.verify_ssl,
        default_namespace=namespace or "default",
    )
