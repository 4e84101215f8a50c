"""kopf handlers: thin module-level functions that hand events to the runtime.

No business branching here: the login handler turns kopf's connection info
into our adapter's credentials, and one event handler per watched resource
puts objects into the store. Everything else happens in the engine.
"""

from __future__ import annotations

import logging
from typing import Any

import kopf

from aim_core.kube import Credentials

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


def login(memo: kopf.Memo, logger: logging.Logger, **kwargs: Any) -> kopf.ConnectionInfo | None:
    """In-cluster service account or the current kubeconfig (via the kubernetes client, for exec auth)."""
    info = memo.login_override(**kwargs) if memo.get("login_override") else None
    if info is None:
        try:
            info = kopf.login_via_client(logger=logger, **kwargs)
        except Exception as exc:  # noqa: BLE001 - fall back to kopf's own readers
            logger.debug("kubernetes client login failed: %s", exc)
            info = kopf.login_with_service_account(logger=logger, **kwargs) or kopf.login_with_kubeconfig(
                logger=logger, **kwargs
            )
    if info is not None:
        memo.runtime.set_credentials(credentials_from(info))
    return info


async def on_event(event: dict[str, Any], body: kopf.Body, resource: kopf.Resource, memo: kopf.Memo, **_: Any) -> None:
    """Keep the store in step with the watch stream.

    Async on purpose: kopf runs sync handlers in a thread pool, and the store
    and the work queue belong to the event loop.
    """
    memo.runtime.on_watch_event(resource.group, resource.version, resource.plural, event.get("type"), dict(body))


def build_registry(resources: list[Any]) -> kopf.OperatorRegistry:
    """A kopf registry with the login handler and one event handler per resource."""
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry, id="login")(login)
    for ref in resources:
        kopf.on.event(ref.group, ref.version, ref.plural, registry=registry, id=f"store-{ref.plural}")(on_event)
    return registry
