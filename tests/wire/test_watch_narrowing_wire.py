"""The operator's cluster-wide watches ask the API server only for what it reads.

A cluster holds Secrets the operator never reads (Helm keeps releases of up to
1 MiB in Secrets) and Pods of every other workload. The operator selects on the
server: Secrets by ``type`` (every type but those no reader names: Helm releases, ServiceAccount tokens, TLS),
Pods by the labels of the pods it owns or inspects, Events of Pods by type and
reason. What the server sends through the operator's connection is measured at
a proxy in front of it.
"""

from __future__ import annotations

import asyncio
import base64

from aim_core.reconcile.resources import SECRETS
from tests.wire.conftest import eventually

BIG = base64.b64encode(b"x" * 100_000).decode()


def unrelated_secret(i: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {"name": f"sh.helm.release.v1.app{i}.v1", "namespace": "apps"},
        "data": {"release": BIG},
    }


def unrelated_pod(i: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{i}",
            "namespace": "apps",
            "labels": {"app": "web"},
            "annotations": {"note": "y" * 10_000},
        },
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
        "status": {"phase": "Running"},
    }


def pull_secret(name: str) -> dict:
    auth = base64.b64encode(b'{"auths": {"registry.example": {"auth": "dTpw"}}}').decode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": name, "namespace": "apps"},
        "data": {".dockerconfigjson": auth},
    }


async def test_unrelated_secrets_and_pods_are_never_sent_to_the_operator(kube, proxy, behind_proxy):
    store = behind_proxy.runtime.store
    await asyncio.sleep(0.5)
    before = proxy.received
    for i in range(20):  # 2.7 MB of Secrets, 200 KB of Pods the operator has no use for
        kube.put_object(unrelated_secret(i))
    for i in range(20):
        kube.put_object(unrelated_pod(i))
    kube.put_object(pull_secret("regcred"))  # a Secret of the type it reads still reaches it
    streams = [r for r in behind_proxy.runtime.reflectors if r.ref.plural == "secrets"]
    await eventually(
        lambda: any(
            r.resource_version
            and int(r.resource_version) >= int(kube.get("v1/secrets", "apps", "regcred")["metadata"]["resourceVersion"])
            for r in streams
        )
    )
    await asyncio.sleep(0.5)
    sent = proxy.received - before
    # main sent 2.9 MB here (every Secret, every Pod); what is left is the other streams' own traffic
    assert sent < 600_000, f"the API server sent {sent} bytes to the operator"
    assert store.count(SECRETS) == 0  # none referenced by a model or source: none kept
