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

import base64
import functools
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs

from aim_core.kube import Credentials, private_dir

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
CHILD_SECONDS = 120.0  # an exec plugin may ask a cloud's token service

log = logging.getLogger("aim_engine.login")


class LoginError(Exception):
    """No usable kubeconfig or in-cluster configuration."""


def credentials(
    kubeconfig: str | None = None, context: str | None = None, *, in_cluster_first: bool = False, isolated: bool = False
) -> Credentials:
    """Credentials of the chosen kubeconfig context, else of the pod's service account.

    :param in_cluster_first: try the pod's service account before the kubeconfig (the operator),
        unless a kubeconfig or context was named.
    :param isolated: read the kubeconfig in a child process (the operator): the kubernetes client
        and the pydantic models it brings cost a long-running process about 16 MB it never uses again.
    :raises LoginError: saying what was tried.
    """
    read = _from_kubeconfig_in_child if isolated else _from_kubeconfig
    if in_cluster_first and not (kubeconfig or context):
        try:
            return _in_cluster()
        except NotConfigured:
            pass
    try:
        return read(kubeconfig, context)
    except (NotConfigured, OSError) as kube_error:
        if kubeconfig or context:
            raise LoginError(
                f"cannot use the kubeconfig{' ' + kubeconfig if kubeconfig else ''}"
                f"{' context ' + context if context else ''}: {kube_error}"
            ) from kube_error
        try:
            return _in_cluster()
        except NotConfigured as cluster_error:
            raise LoginError(
                f"no kubeconfig ({kube_error}) and not in a cluster ({cluster_error}); "
                "pass --kubeconfig or set KUBECONFIG"
            ) from cluster_error


class NotConfigured(Exception):
    """This way of logging in is not configured here (the kubernetes client's ConfigException, or ours)."""


def _from_kubeconfig(kubeconfig: str | None, context: str | None) -> Credentials:
    import kubernetes.config

    try:
        return _read_kubeconfig(kubeconfig, context)
    except kubernetes.config.ConfigException as exc:
        raise NotConfigured(str(exc)) from exc


def _read_kubeconfig(kubeconfig: str | None, context: str | None) -> Credentials:
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


SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
SERVICE_TOKEN_FILENAME = str(SERVICE_ACCOUNT / "token")
SERVICE_CERT_FILENAME = str(SERVICE_ACCOUNT / "ca.crt")


def _in_cluster() -> Credentials:
    """The pod's service account, read as the kubernetes client's ``load_incluster_config`` reads it.

    Read here rather than through the client, so that an operator in a cluster never imports it.
    """
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise NotConfigured("Service host/port is not set.")
    if not os.path.isfile(SERVICE_TOKEN_FILENAME):
        raise NotConfigured("Service token file does not exist.")
    token = Path(SERVICE_TOKEN_FILENAME).read_text(encoding="utf-8").strip()
    if not token:
        raise NotConfigured("Token file exists but empty.")
    if not os.path.isfile(SERVICE_CERT_FILENAME):
        raise NotConfigured("Service certification file does not exist.")
    try:
        namespace = SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
    except OSError:
        namespace = None
    address = f"[{host}]" if ":" in host else host  # an IPv6 address
    # bound service-account tokens expire (an hour by default); the kubelet rewrites the file in time
    return Credentials(
        server=f"https://{address}:{port}",
        token=token,
        ca_path=SERVICE_CERT_FILENAME,
        default_namespace=namespace or "default",
        token_file=SERVICE_TOKEN_FILENAME,
    )


def _from_kubeconfig_in_child(kubeconfig: str | None, context: str | None) -> Credentials:
    """:func:`_from_kubeconfig` in a child process; what it logged (an exec plugin's words) is logged here.

    The credentials come back over a pipe, never through a file. An exec plugin's credentials name
    this function to run it again.
    """
    command = [sys.executable, "-m", "aim_core.operator.login"]
    if kubeconfig:
        command += ["--kubeconfig", kubeconfig]
    if context:
        command += ["--context", context]
    try:
        done = subprocess.run(command, capture_output=True, check=False, timeout=CHILD_SECONDS)
    except subprocess.TimeoutExpired:
        raise NotConfigured(
            f"reading the kubeconfig took over {CHILD_SECONDS:.0f} s (an exec plugin that hangs?)"
        ) from None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no answer"]
        raise NotConfigured(f"reading the kubeconfig failed ({tail[0]})") from None
    for line in answer.get("said") or ():
        log.warning("%s", line)
    if "error" in answer:
        if answer.get("kind") == "os":
            raise OSError(answer["error"])
        raise NotConfigured(answer["error"])
    fields = answer["credentials"]
    for key in ("ca_data", "certificate_data", "private_key_data"):
        if fields.get(key) is not None:
            fields[key] = base64.b64decode(fields[key])
    creds = Credentials(**fields)
    if answer.get("exec"):
        creds = attrs.evolve(creds, relogin=functools.partial(_from_kubeconfig_in_child, kubeconfig, context))
    return creds


def _child(argv: list[str]) -> int:
    """``python -m aim_core.operator.login``: one kubeconfig read, answered as JSON on stdout."""
    import argparse
    import logging

    parser = argparse.ArgumentParser(prog="python -m aim_core.operator.login")
    parser.add_argument("--kubeconfig")
    parser.add_argument("--context")
    args = parser.parse_args(argv)
    said: list[str] = []

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    logging.getLogger().addHandler(Said(logging.WARNING))
    answer: dict[str, Any]
    try:
        creds = _from_kubeconfig(args.kubeconfig, args.context)
    except NotConfigured as exc:
        answer = {"error": str(exc), "kind": "config"}
    except OSError as exc:
        answer = {"error": str(exc), "kind": "os"}
    else:
        fields = attrs.asdict(creds, filter=lambda a, _: a.name != "relogin")
        for key in ("ca_data", "certificate_data", "private_key_data"):
            if isinstance(fields.get(key), str):
                fields[key] = fields[key].encode()
            if fields.get(key) is not None:
                fields[key] = base64.b64encode(fields[key]).decode()
        answer = {"credentials": fields, "exec": creds.relogin is not None}
    answer["said"] = said
    sys.stdout.write(json.dumps(answer))
    return 0


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


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
