"""Benchmark: the operator's memory with many objects in its store (issue 9: 10,000 under 200 MB RSS).

    python benchmarks/bench_store_memory.py [--objects 10000] [--no-children] [--no-pods]

1. Capture real objects: the operator reconciles one AIMService against the API
   emulator (created the way ``kubectl apply`` does, with its last-applied
   annotation); the service as the server then holds it (status, finalizer,
   managedFields of every writer) and its InferenceService are the templates.
2. In a fresh interpreter per variant, build the operator's runtime (plugins,
   controllers, store, indexes, engine) and feed it N copies of the service
   (and N InferenceServices, and N predictor pods as the kubelet reports them
   running) through the watch path, ``Runtime.on_watch_event``, as a stream
   would. Each copy's condition times differ (services created at different
   moments share none). Report the process's RSS before and after, with the
   store slimming on (what the operator does) and off (everything kept), and
   per kind the bytes an object takes (``sys.getsizeof`` over its parts,
   what objects share counted once) and its indexes.
3. Then what the engine remembers once it has written these objects itself
   (an operator that created the 10,000 services): per InferenceService the
   applied body's stored form, per service the status written
   (:class:`aim_core.runtime.applyset.AppliedForms`), and the RSS again.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def capture() -> tuple[dict[str, Any], dict[str, Any]]:
    import httpx
    import kmock

    from aim_core.api.crds import generate_crds
    from aim_testing.emulator import declare_resources
    from benchmarks import seed
    from benchmarks.harness import OperatorThread, QuickServer, TimingEmulator

    namespaces = seed.namespace_names(1)
    em = declare_resources(TimingEmulator(timed=frozenset()), crds=generate_crds())
    for obj in seed.cluster(namespaces, nodes=2, runtime_config=True, routing=False):
        em.put_object(obj)
    [(ns, name, isvc)] = seed.services(1, namespaces)
    async with em, kmock.Server(em, server_cls=QuickServer):
        url = str(em.url).rstrip("/")
        op = OperatorThread(url, 2)
        try:
            await op.start()
            await op.settle(em, timeout=60)
            body = seed.service(name, ns)
            body.setdefault("metadata", {}).setdefault("annotations", {})[LAST_APPLIED] = json.dumps(body)
            async with httpx.AsyncClient(base_url=url) as client:
                path = f"/apis/aim.eai.amd.com/v1alpha1/namespaces/{ns}/aimservices"
                (await client.post(path, json=body, headers={"User-Agent": "kubectl/v1.31"})).raise_for_status()
            deadline = time.monotonic() + 60
            while em.get_object("inferenceservices", ns, isvc) is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await op.settle(em, timeout=60)
            return em.get_object("aimservices", ns, name), em.get_object("inferenceservices", ns, isvc)
        finally:
            await op.stop()


def _uid(i: int, tag: str) -> str:
    return f"{i:08}-0000-0000-0000-{tag:0>12}"


def _renamed(obj: dict[str, Any], i: int, namespaces: int, tag: str = "0") -> dict[str, Any]:
    copy_ = copy.deepcopy(obj)
    meta = copy_["metadata"]
    meta["name"] = f"{meta['name']}-{i:05}"
    meta["namespace"] = f"bench-{i % namespaces:02}"
    meta["uid"] = _uid(i, tag)
    meta["resourceVersion"] = str(1000 + i)
    return copy_


def _child(isvc: dict[str, Any], service: dict[str, Any], i: int, namespaces: int) -> dict[str, Any]:
    """The InferenceService of the i-th service copy: its owner (name, uid) is that copy, as in a cluster."""
    owner_uid, name = service["metadata"]["uid"], service["metadata"]["name"] + f"-{i:05}"
    child = _renamed(json.loads(json.dumps(isvc).replace(owner_uid, _uid(i, "0"))), i, namespaces, "c")
    for ref in child["metadata"].get("ownerReferences") or []:
        ref["name"] = name
    child["metadata"]["labels"] = {**child["metadata"].get("labels", {}), "aim.eai.amd.com/service.name": name}
    return child


def _timed(obj: dict[str, Any], i: int) -> dict[str, Any]:
    """``obj`` with condition times of its own: copy i changed state i * 7 s after the first."""
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_780_000_000 + 7 * i))
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if "lastTransitionTime" in cond:
            cond["lastTransitionTime"] = at
    return obj


def _pod(isvc: dict[str, Any], i: int) -> dict[str, Any]:
    """The predictor pod of the i-th InferenceService copy, running and Ready, as a kubelet reports it."""
    meta = isvc["metadata"]
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_780_000_000 + 7 * i))
    digest = f"{i:064x}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{meta['name']}-predictor-{i:05x}",
            "namespace": meta["namespace"],
            "uid": _uid(i, "p"),
            "resourceVersion": str(30_000 + i),
            "creationTimestamp": at,
            "labels": {
                "serving.kserve.io/inferenceservice": meta["name"],
                "component": "predictor",
                "app": f"isvc.{meta['name']}-predictor",
                "pod-template-hash": f"{i:010x}",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{meta['name']}-predictor-{i:05x}",
                    "uid": _uid(i, "r"),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"nodeName": "gpu-node-1", "containers": [{"name": "kserve-container", "image": "aim:bench"}]},
        "status": {
            "phase": "Running",
            "hostIP": "10.0.0.5",
            "podIP": f"10.244.{i // 250}.{i % 250}",
            "qosClass": "Burstable",
            "startTime": at,
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": at}
                for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "name": "kserve-container",
                    "image": "aim:bench",
                    "imageID": f"docker.io/library/aim@sha256:{'a' * 64}",
                    "containerID": f"containerd://{digest}",
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": at}},
                    "lastState": {},
                }
            ],
        },
    }


def _deep(value: Any, seen: set[int]) -> int:
    """Bytes of ``value`` and what it holds, each object counted once over all calls with ``seen``."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return total


def measure(service: dict[str, Any], isvc: dict[str, Any] | None, n: int, slim: bool, out: Any, pods: bool) -> None:
    """In a fresh interpreter: the runtime's RSS empty, then with ``n`` services (and InferenceServices)."""
    import aim_core.runtime.store as store_module
    from aim_core.kube import dumps, loads  # what the watch streams decode with (orjson)
    from aim_core.operator.controllers import build_controllers
    from aim_core.operator.settings import Settings
    from aim_core.operator.wiring import Runtime
    from aim_core.plugin.manager import get_plugin_manager
    from aim_core.reconcile.resources import PODS, SERVICES

    if not slim:  # everything kept as decoded (what the store did before)
        store_module.slim = lambda obj, field_managers: obj  # type: ignore[assignment]
        store_module.compact = lambda value, shared: value  # type: ignore[assignment]
    pm = get_plugin_manager()
    runtime = Runtime(Settings(), build_controllers(pm), pm)
    isvc_ref = runtime.engine.controllers["service"].providers.runtime.resource
    gc.collect()
    empty = rss_mb()
    for i in range(n):
        # what a stream hands over: freshly decoded JSON, one object at a time
        runtime.on_watch_event(SERVICES, "ADDED", loads(dumps(_timed(_renamed(service, i, 10), i))))
        if isvc is not None:
            child = _timed(_child(isvc, service, i, 10), i)
            runtime.on_watch_event(isvc_ref, "ADDED", loads(dumps(child)))
            if pods:
                runtime.on_watch_event(PODS, "ADDED", loads(dumps(_pod(child, i))))
    gc.collect()
    full = rss_mb()
    engine = runtime.engine
    for i in range(n):  # what the engine keeps after writing each service's status and InferenceService
        svc = _renamed(service, i, 10)
        meta = svc["metadata"]
        engine._statuses.remember(("service", meta["namespace"], meta["name"]), svc["status"], svc["status"])
        if isvc is not None:
            child = _child(isvc, service, i, 10)
            body = {
                "apiVersion": child["apiVersion"],
                "kind": child["kind"],
                "spec": child["spec"],
                "metadata": {
                    k: v
                    for k, v in child["metadata"].items()
                    if k in ("name", "namespace", "labels", "annotations", "ownerReferences")
                },
            }
            engine._applied.remember(
                (isvc_ref, meta["namespace"], child["metadata"]["name"]), body, loads(dumps(child))
            )
    gc.collect()
    forms = rss_mb()
    seen: set[int] = set()
    kinds = {}
    for ref in (SERVICES, isvc_ref, PODS):
        table = runtime.store._tables[ref]  # noqa: SLF001 - a benchmark looks inside
        held = list(table.objects.values())
        if held:
            kinds[ref.plural] = {
                "objects": len(held),
                "bytes_each": round(sum(_deep(obj, seen) for obj in held) / len(held)),
                "index_bytes_each": round(_deep(table.indexes, seen) / len(held)),
            }
    out.put(
        {
            "slim": slim,
            "objects": runtime.store.count(SERVICES) + runtime.store.count(isvc_ref) + runtime.store.count(PODS),
            "rss_empty_mb": round(empty, 1),
            "rss_full_mb": round(full, 1),
            "rss_forms_mb": round(forms, 1),
            "queued_keys": engine.queue.pending(),
            "kinds": kinds,
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=10_000, help="AIMServices in the store")
    parser.add_argument("--no-children", action="store_true", help="no InferenceService (nor pod) per service")
    parser.add_argument("--no-pods", action="store_true", help="no predictor pod per InferenceService")
    args = parser.parse_args()
    service, isvc = asyncio.run(capture())
    sizes = {"service_json_bytes": len(json.dumps(service)), "isvc_json_bytes": len(json.dumps(isvc))}
    print(
        f"captured: AIMService {sizes['service_json_bytes']} B of JSON "
        f"({len(service['metadata'].get('managedFields') or [])} managedFields entries), "
        f"InferenceService {sizes['isvc_json_bytes']} B"
    )
    ctx = multiprocessing.get_context("spawn")
    for slim in (False, True):
        out = ctx.Queue()
        proc = ctx.Process(
            target=measure,
            args=(service, None if args.no_children else isvc, args.objects, slim, out, not args.no_pods),
        )
        proc.start()
        result = out.get(timeout=600)
        proc.join()
        print(
            f"store slimming and compaction {'on ' if slim else 'off'}: {result['objects']} objects; RSS {result['rss_empty_mb']} MB "
            f"empty -> {result['rss_full_mb']} MB full ({result['queued_keys']} keys queued) -> "
            f"{result['rss_forms_mb']} MB with the engine's applied forms"
        )
        for plural, kind in result["kinds"].items():
            print(
                f"  {plural}: {kind['objects']} objects, {kind['bytes_each']} B each, "
                f"indexes {kind['index_bytes_each']} B each"
            )


if __name__ == "__main__":
    main()
