"""Credentials for the operator (its kopf login handler) and the CLI's cluster commands (``doctor``, ``describe``).

Read through the kubernetes client, so exec and auth-provider plugins of a kubeconfig work: a
kubeconfig file (``--kubeconfig``, else ``$KUBECONFIG``, else ``~/.kube/config``) and its context
(``--context``, else the current one); without a kubeconfig and without explicit choices, the pod's
service account. The operator asks for the service account first, as kopf's own login does.

Credentials that change under a running operator are marked for
:class:`~aim_core.kube.credentials.Authenticator` to read again, as client-go
does: the service account's token file and a kubeconfig user's ``tokenFile``
(``token_file``), and an ``exec`` plugin (``relogin`` runs the plugin again, ``expires``
is its ``expirationTimestamp``). A token read from a file is trimmed of its final newline.

The kubernetes client writes inline certificates and keys of a kubeconfig (``client-key-data``, or
what an exec plugin returns) to temporary files and removes them only when the process exits. Here
it writes them into a private directory that is removed as soon as their contents are read: the
:class:`~aim_core.kube.Credentials` hold them in memory and no private key stays on disk.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import attrs

from aim_core.kube import Credentials, private_dir

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class LoginError(Exception):
    """No usable kubeconfig or in-cluster configuration."""


def credentials(
    kubeconfig: str | None = None, context: str | None = None, *, in_cluster_first: bool = False
) -> Credentials:
    """Credentials of the chosen kubeconfig context, else of the pod's service account.

    :param in_cluster_first: try the pod's service account before the kubeconfig (the operator),
        unless a kubeconfig or context was named.
    :raises LoginError: saying what was tried.
    """
    import kubernetes.config

    if in_cluster_first and not (kubeconfig or context):
        try:
            return _in_cluster()
        except kubernetes.config.ConfigException:
            pass
    try:
        return _from_kubeconfig(kubeconfig, context)
    except (kubernetes.config.ConfigException, OSError) as kube_error:
        if kubeconfig or context:
            raise LoginError(
                f"cannot use the kubeconfig{' ' + kubeconfig if kubeconfig else ''}"
                f"{' context ' + context if context else ''}: {kube_error}"
            ) from kube_error
        try:
            return _in_cluster()
        except kubernetes.config.ConfigException as cluster_error:
            raise LoginError(
                f"no kubeconfig ({kube_error}) and not in a cluster ({cluster_error}); "
                "pass --kubeconfig or set KUBECONFIG"
            ) from cluster_error


def _from_kubeconfig(kubeconfig: str | None, context: str | None) -> Credentials:
    import kubernetes.client
    from kubernetes.config import kube_config

    config = kubernetes.client.Configuration()
    # the client reads $KUBECONFIG once, when imported; read it now
    path = kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    with private_dir() as scratch:
        # load_kube_config's own steps, keeping the loader: it knows the user's tokenFile and the plugin's expiry
        loader = kube_config._get_kube_config_loader(
            filename=path, active_context=context, persist_config=False, temp_file_path=scratch
        )
        loader.load_and_set(config)
        namespace = ((loader.current_context or {}).get("context") or {}).get("namespace")
        creds = _credentials(config, namespace, scratch)
    user = getattr(loader, "_user", None)
    if not user:
        return creds
    if "token" not in user and "tokenFile" in user and creds.token:
        base = loader._get_base_path(user.path)  # noqa: SLF001 - a relative tokenFile is relative to its kubeconfig
        return attrs.evolve(creds, token_file=os.path.join(base, user["tokenFile"]))
    if "exec" in user and "token" not in user and "tokenFile" not in user:
        expiry = getattr(loader, "expiry", None)
        return attrs.evolve(
            creds,
            relogin=functools.partial(_from_kubeconfig, kubeconfig, context),
            expires=expiry.timestamp() if expiry is not None else None,
        )
    return creds


def _in_cluster() -> Credentials:
    import kubernetes.client
    import kubernetes.config
    from kubernetes.config import incluster_config

    config = kubernetes.client.Configuration()
    kubernetes.config.load_incluster_config(client_configuration=config)
    try:
        namespace = SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
    except OSError:
        namespace = None
    # bound service-account tokens expire (an hour by default); the kubelet rewrites the file in time
    return attrs.evolve(_credentials(config, namespace, None), token_file=incluster_config.SERVICE_TOKEN_FILENAME)


def _credentials(config: Any, namespace: str | None, scratch: str | None) -> Credentials:
    """What the client configuration says, with files the client wrote into ``scratch`` read into memory."""

    def path_or_data(path: str | None) -> tuple[str | None, bytes | None]:
        if path and scratch and os.path.dirname(os.path.abspath(path)) == os.path.abspath(scratch):
            return None, Path(path).read_bytes()
        return path or None, None

    # the client's refresh hook runs an exec plugin again whenever its token expires within 5 minutes;
    # the Authenticator decides when to read again here
    config.refresh_api_key_hook = None
    ca_path, ca_data = path_or_data(config.ssl_ca_cert)
    certificate_path, certificate_data = path_or_data(config.cert_file)
    private_key_path, private_key_data = path_or_data(config.key_file)
    header = config.get_api_key_with_prefix("BearerToken") or config.get_api_key_with_prefix("authorization")
    token = header.split(" ", 1)[-1].strip() if header else None  # a token file's final newline is not the token's
    return Credentials(
        server=config.host,
        token=token,
        ca_path=ca_path,
        ca_data=ca_data,
        certificate_path=certificate_path,
        certificate_data=certificate_data,
        private_key_path=private_key_path,
        private_key_data=private_key_data,
        username=config.username or None,
        password=config.password or None,
        insecure=not config.verify_ssl,
        default_namespace=namespace or "default",
    )
