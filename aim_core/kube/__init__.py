"""The one adapter to the Kubernetes API server.

:mod:`aim_core.kube.client` sends the requests and streams the watches
(:class:`Kube`); :mod:`aim_core.kube.credentials` says how it reaches and
authenticates to the server (:class:`Credentials`, TLS, proxy). Import the
names from here.
"""

from aim_core.kube.client import (
    APPLY_PATCH,
    KEEPALIVE_SECONDS,
    MERGE_PATCH,
    USER_AGENT,
    Kube,
    RequestCounter,
    dumps,
    loads,
    resource_path,
)
from aim_core.kube.credentials import Credentials, authorization, pem, private_dir, proxy_for, ssl_context

__all__ = [
    "APPLY_PATCH",
    "KEEPALIVE_SECONDS",
    "MERGE_PATCH",
    "USER_AGENT",
    "Credentials",
    "Kube",
    "RequestCounter",
    "authorization",
    "dumps",
    "loads",
    "pem",
    "private_dir",
    "proxy_for",
    "resource_path",
    "ssl_context",
]
