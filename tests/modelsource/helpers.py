"""Run a source through selectors, a catalog and the plan, without a server."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from aim_core.modelsource.observed import Observed, SecretProblem, Sync
from aim_core.modelsource.plan import plan_source
from aim_core.modelsource.selectors import parse_selectors
from aim_core.modelsource.sync import sync_selectors
from aim_core.reconcile.plan import Plan
from aim_core.runtime.engine import build_status
from tests.modelsource.docexamples import MemoryCatalog

NOW = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)


class _Controller:
    name = "cluster-model-source"
    status_map: dict = {}
    root_status = True


async def synced(
    source: Mapping[str, Any],
    catalog: Any = None,
    *,
    credentials=lambda registry: None,
    finished: datetime.datetime = NOW,
    previous: Sync | None = None,
) -> Sync:
    selectors = parse_selectors(source.get("spec") or {})
    results = await sync_selectors(selectors, catalog or MemoryCatalog(), credentials)
    failed = any(not r.ok for r in results)
    ok = any(r.listed for r in results)
    attempt = ((previous.attempt if previous else 0) + 1) if failed else 0
    last = finished if ok else (previous.last_success if previous else None)
    return Sync(source["metadata"].get("generation"), tuple(results), finished, attempt, last)


def observed(
    source: Mapping[str, Any],
    sync: Sync | None,
    models: Iterable[Mapping[str, Any]] = (),
    *,
    others: Iterable[Mapping[str, Any]] = (),
    now: datetime.datetime = NOW,
    syncing: bool = False,
    secret_problems: tuple[SecretProblem, ...] = (),
) -> Observed:
    models = tuple(models)
    by_name = {m["metadata"]["name"]: m for m in (*models, *others)}
    return Observed(
        now=now,
        selectors=tuple(parse_selectors(source.get("spec") or {})),
        sync=sync,
        syncing=syncing,
        models=models,
        model_named=by_name.get,
        secret_problems=secret_problems,
    )


def status_of(source: Mapping[str, Any], plan: Plan, now: datetime.datetime = NOW) -> dict[str, Any]:
    status, _ = build_status(_Controller(), dict(source), plan, list(plan.issues), now=now)
    return status


def condition(status: Mapping[str, Any], type_: str) -> dict[str, Any]:
    return next(c for c in status.get("conditions", []) if c["type"] == type_)


def created(plan: Plan) -> list[dict[str, Any]]:
    return [d.obj for d in plan.apply]


def images(plan: Plan) -> set[str]:
    return {obj["spec"]["image"] for obj in created(plan)}


def as_live(obj: Mapping[str, Any], source_name: str | None = None) -> dict[str, Any]:
    """A created model as the store would hold it after the apply."""
    live = {"apiVersion": "aim.eai.amd.com/v1alpha1", "kind": "AIMClusterModel", **obj}
    return live


async def run(
    source: Mapping[str, Any], catalog: Any = None, models: Iterable[Mapping[str, Any]] = (), **kw: Any
) -> tuple[Plan, dict[str, Any]]:
    sync = await synced(source, catalog)
    plan = plan_source(source, observed(source, sync, models, **kw))
    return plan, status_of(source, plan)
