"""The call log: every request to the emulator, classified like a Kubernetes audit log entry.

kmock keeps a log of the requests it served; :class:`ApiCall` says what each
one was (verb, resource, namespace, name, field manager, user agent), so tests
and benchmarks can count the calls the operator makes.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import kmock

from aim_testing.emulator.metadata import res_key
from aim_testing.emulator.patches import APPLY

READ_VERBS = frozenset({"get", "list", "watch"})
WRITE_VERBS = frozenset({"create", "update", "patch", "apply", "delete", "deletecollection"})


@attrs.frozen
class ApiCall:
    """One request to the emulator, classified like a Kubernetes audit log entry."""

    verb: str  # get list watch create update patch apply delete deletecollection, or discovery/other
    resource: str | None  # 'v1/pods', 'aim.eai.amd.com/v1alpha1/aimservices'
    namespace: str | None
    name: str | None
    subresource: str | None
    field_manager: str | None
    user_agent: str


@attrs.frozen
class Sent:
    """One request as it went over the wire: method, path and the ``Authorization`` it carried."""

    method: str
    path: str
    authorization: str

    @property
    def write(self) -> bool:
        return self.method in ("POST", "PUT", "PATCH", "DELETE")


def classify(request: kmock.Request, resources: Mapping[kmock.resource, kmock.ResourceInfo]) -> ApiCall:
    """The :class:`ApiCall` of a request (no namespace for declared cluster-scoped resources)."""
    res, method, params = request.resource, request.method.value, request.params
    if res is None or not res.plural or not res.version:
        verb = "discovery" if method == "GET" else "other"
    elif method == "GET":
        verb = "watch" if params.get("watch") in ("true", "1") else "get" if request.name else "list"
    elif method == "PATCH":
        verb = "apply" if content_type(request) == APPLY else "patch"
    elif method == "DELETE":
        verb = "delete" if request.name else "deletecollection"
    else:
        verb = {"POST": "create", "PUT": "update"}.get(method, "other")
    known = res is not None and res in resources
    cluster_scoped = known and resources[res].namespaced is False
    return ApiCall(
        verb=verb,
        resource=res_key(res) if res is not None and res.plural else None,
        namespace=None if cluster_scoped else request.namespace,
        name=request.name,
        subresource=request.subresource,
        field_manager=params.get("fieldManager"),
        user_agent=header(request, "user-agent"),
    )


def header(request: kmock.Request, name: str) -> str:
    """A request header by its lower-case name, or ``""``."""
    return next((v for k, v in request.headers.items() if k.lower() == name), "")


def content_type(request: kmock.Request) -> str:
    """The media type of the request body, without parameters."""
    return header(request, "content-type").split(";")[0].strip().lower()
