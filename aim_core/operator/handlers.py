"""kopf handlers: the login handler, which hands kopf's credentials to the runtime.

kopf gives us login (in-cluster, kubeconfig, exec plugins) and the liveness
probe; the watch streams that feed the store are the operator's own
(:mod:`aim_core.runtime.reflector`). Everything else happens in the engine.
"""

from __future__ import annotations

import logging
from typing import Any

import kopf

from aim_core.kube import Credentials
from aim_core.operator.login import credentials as login_credentials

log = logging.getLogger("aim_engine.operator")


def credentials_from(info: kopf.ConnectionInfo) -> Credentials:
    return Credentials(
        server=info.server,
        token=info.token,
        ca_path=info.ca_path,
        ca_data=info.ca_data,
        certificate_path=info.certificate_path,
        certificate_data=info.certificate_data,
        private_key_path=info.private_key_path,
        private_key_data=info.private_key_data,
        username=info.username,
        password=info.password,
        insecure=bool(info.insecure),
        default_namespace=info.default_namespace,
    )


def connection_info(creds: Credentials) -> kopf.ConnectionInfo:
    """kopf's form of ``creds`` (certificate and key in memory, as :mod:`aim_core.operator.login` read them)."""
    return kopf.ConnectionInfo(
        server=creds.server,
        token=creds.token,
        ca_path=creds.ca_path,
        ca_data=creds.ca_data,
        certificate_path=creds.certificate_path,
        certificate_data=creds.certificate_data,
        private_key_path=creds.private_key_path,
        private_key_data=creds.private_key_data,
        username=creds.username,
        password=creds.password,
        insecure=creds.insecure,
        default_namespace=creds.default_namespace,
    )


def login(memo: kopf.Memo, logger: logging.Logger, **kwargs: Any) -> kopf.ConnectionInfo | None:
    """In-cluster service account or the current kubeconfig (via the kubernetes client, for exec auth)."""
    info = memo.login_override(**kwargs) if memo.get("login_override") else None
    creds = None
    if info is None:
        try:
            # not kopf.login_via_client: it leaves a kubeconfig's inline client key in a temporary file
            settings = getattr(memo.runtime, "settings", None)  # --kubeconfig and --context of `aim-engine run`
            creds = login_credentials(
                getattr(settings, "kubeconfig", None),
                getattr(settings, "context", None),
                in_cluster_first=True,
                isolated=True,
            )
            info = connection_info(creds)
        except Exception as exc:  # noqa: BLE001 - fall back to kopf's own readers
            logger.debug("kubernetes client login failed: %s", exc)
            info = kopf.login_with_service_account(logger=logger, **kwargs) or kopf.login_with_kubeconfig(
                logger=logger, **kwargs
            )
    if info is not None:
        # ours, not kopf's form of them: they say where the token comes from (read again when it expires)
        memo.runtime.set_credentials(creds or credentials_from(info))
    return info


def build_registry() -> kopf.OperatorRegistry:
    """A kopf registry with the login handler (kopf watches nothing for us)."""
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry, id="login")(login)
    return registry
