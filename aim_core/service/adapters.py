"""LoRA adapters of an AIMService (issue 22): artifacts, mounts, engine arguments, status.

Pure: :func:`plan_adapters` takes the service, the artifacts of its namespace
whose ``sourceUri`` an adapter names, the resolved model and template and the
user's merged ``AIM_ENGINE_ARGS``, and returns an :class:`AdapterPlan`.

Decisions:

* **Weights through artifacts, shared by source.** Each adapter uses an
  unowned AIMArtifact of the namespace with its ``sourceUri`` (any, a template
  cache's too; Ready ones first), else the service creates one named as a
  Shared template cache would name it (source, env), labelled
  ``aim.eai.amd.com/adapter``. A second service with the same adapter finds it.
  An artifact that exists is never re-applied. Deleting the service or
  dropping the adapter leaves the artifact for reuse; eviction may take it
  once nothing refers to it (``status.adapters[].artifact`` is the reference
  the artifact controller counts).
* **Served = Ready and compatible.** Only adapters whose artifact is Ready and
  whose ``adapter_config.json`` (reported by the downloader in the artifact's
  ``status.adapter``) fits the base model and the rank limit are mounted and
  passed to the engine. Adding an adapter changes the predictor only once its
  weights are ready; removing one changes it at once (its mount goes too).
* **Engine arguments.** One operator layer just above the defaults:
  ``{"enable-lora": true, "lora-modules": ["NAME=PATH", ...], "max-loras": N,
  "max-lora-rank": R}``. Every user layer (runtime config, template, service
  ``env``) is above it, so a user's own value for any key wins. A user's
  ``lora-modules`` or ``enable-lora: false`` together with ``spec.adapters``
  is reported (``LoraModulesConflict``) rather than silently overridden.
* **Limits.** ``max-loras``: ``spec.adapterLimits.maxLoaded``, else the number
  of served adapters. ``max-lora-rank``: ``spec.adapterLimits.maxRank``, else
  the smallest vLLM rank at or above the highest served rank (16, vLLM's
  default, when no rank is known). Only an explicit limit (spec or the user's
  engine args) can refuse an adapter (``AdapterRankTooHigh``).
* **Status.** The condition ``AdaptersReady``: True when every adapter is
  served; False ``AdaptersDownloading`` while some wait for their weights (not
  a component, so the root status stays Running while the base model serves);
  a failed adapter makes ``Adapters`` a Degraded component with that adapter's
  reason, and the others still serve.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from aim_core.api.service import LORA_RANKS
from aim_core.reconcile.conditions import Condition
from aim_core.reconcile.envvars import ENGINE_ARGS
from aim_core.reconcile.gojson import go_marshal
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.naming import artifact_name, derived_name
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.reconcile.resources import ARTIFACTS
from aim_core.service.adapter_inputs import adapter_artifacts as adapter_artifacts
from aim_core.service.adapter_inputs import adapter_sources as adapter_sources
from aim_core.service.adapter_inputs import adapter_specs as adapter_specs
from aim_core.service.adapter_inputs import artifact_view as artifact_view
from aim_core.service.adapter_inputs import base_ids as base_ids
from aim_core.service.adapter_inputs import base_names as base_names
from aim_core.service.adapter_inputs import ready_condition
from aim_core.service.adapter_inputs import user_engine_args as user_engine_args
from aim_core.service.adapter_values import ADAPTER_LABEL as ADAPTER_LABEL
from aim_core.service.adapter_values import ADAPTER_ROOT as ADAPTER_ROOT
from aim_core.service.adapter_values import ADAPTERS as ADAPTERS
from aim_core.service.adapter_values import ALL_SERVED as ALL_SERVED
from aim_core.service.adapter_values import BASE_MISMATCH as BASE_MISMATCH
from aim_core.service.adapter_values import CONDITION as CONDITION
from aim_core.service.adapter_values import CONFIG_INVALID as CONFIG_INVALID
from aim_core.service.adapter_values import CREATING_ARTIFACT as CREATING_ARTIFACT
from aim_core.service.adapter_values import DEFAULT_RANK as DEFAULT_RANK
from aim_core.service.adapter_values import DOWNLOAD_FAILED as DOWNLOAD_FAILED
from aim_core.service.adapter_values import DOWNLOADING, FAILED, PENDING, READY
from aim_core.service.adapter_values import DOWNLOADING_REASON as DOWNLOADING_REASON
from aim_core.service.adapter_values import LORA_CONFLICT as LORA_CONFLICT
from aim_core.service.adapter_values import NAME_CONFLICT as NAME_CONFLICT
from aim_core.service.adapter_values import RANK_TOO_HIGH as RANK_TOO_HIGH
from aim_core.service.adapter_values import SERVED as SERVED
from aim_core.service.adapter_values import VOLUME_PREFIX as VOLUME_PREFIX
from aim_core.service.adapter_values import WAITING as WAITING
from aim_core.service.adapter_values import WAITING_FOR_BASE as WAITING_FOR_BASE
from aim_core.service.adapter_values import AdapterPlan as AdapterPlan
from aim_core.service.adapter_values import AdapterServing as AdapterServing
from aim_core.service.adapter_values import AdapterState as AdapterState
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView

# ---------------------------------------------------------------- decisions


def _same_model(adapter_base: str, ids: set[str]) -> bool | None:
    """Whether an adapter's base model is the service's; ``None`` when one side is unknown."""
    base = adapter_base.strip().rstrip("/")
    if not base or not ids or base.startswith((".", "/")):
        return None  # a local path in adapter_config.json says nothing about the model
    wanted = {i.lower() for i in ids}
    if base.lower() in wanted:
        return True
    if "/" not in base:  # "Llama-3.1-8B" against "meta-llama/Llama-3.1-8B"
        return base.lower() in {i.rsplit("/", 1)[-1] for i in wanted}
    return False


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def desired_artifact(svc: Obj, adapter: Obj) -> dict[str, Any]:
    """The AIMArtifact a service creates for an adapter nothing else downloads yet."""
    view = ServiceView.of(svc)
    env = list(adapter.get("env") or ())
    source = str(adapter["sourceUri"])
    spec: dict[str, Any] = {"sourceUri": source}
    if env:
        spec["env"] = env
    if adapter.get("retentionPriority") is not None:
        spec["retentionPriority"] = adapter["retentionPriority"]
    if view.runtime_config_name:
        spec["runtimeConfigName"] = view.runtime_config_name
    return {
        "apiVersion": ARTIFACTS.api_version,
        "kind": ARTIFACTS.kind,
        "metadata": {
            "name": artifact_name(source, env),
            "namespace": view.namespace or None,
            "labels": {ADAPTER_LABEL: "true"},
        },
        "spec": spec,
    }


def _usable(artifact: Obj) -> bool:
    meta = meta_of(artifact)
    return not meta.get("deletionTimestamp") and not meta.get("ownerReferences")


def _pick(candidates: Iterable[Obj], wanted: str) -> Obj | None:
    """The artifact to use: unowned, not being deleted; the best status first, then the wanted name."""
    usable = [a for a in candidates if _usable(a)]
    if not usable:
        return None

    def rank(a: Obj) -> tuple[int, bool, str]:
        status = status_of(a).get("status") or ""
        order = {"Ready": 0, "Progressing": 1, "Pending": 2, "": 3}.get(status, 4)
        return order, a["metadata"]["name"] != wanted, a["metadata"]["name"]

    return min(usable, key=rank)


def volume_name(adapter_name: str) -> str:
    """Volume of an adapter in the pod: ``adapter-<name>-<hash>``, an RFC 1123 label."""
    return derived_name([VOLUME_PREFIX.rstrip("-"), adapter_name.lower()], [adapter_name], 8)


def _limit(user_args: Obj, key: str, spec_value: Any) -> tuple[int | None, str]:
    value = _int(user_args.get(key))
    if value is not None:
        return value, f"{ENGINE_ARGS} {key}"
    value = _int(spec_value)
    if value is not None:
        return value, "spec.adapterLimits"
    return None, ""


def _one(
    svc: Obj,
    adapter: Obj,
    artifacts: Sequence[Obj],
    ids: set[str],
    names: set[str],
    seen: set[str],
    rank_limit: tuple[int | None, str],
) -> tuple[AdapterState, dict[str, Any] | None]:
    name, source = str(adapter.get("name") or ""), str(adapter.get("sourceUri") or "")
    if name in names:
        return AdapterState(
            name,
            source,
            state=FAILED,
            reason=NAME_CONFLICT,
            message=(
                f"adapter name {name!r} is also the base model's name; requests could not tell them apart: "
                "rename the adapter"
            ),
        ), None
    if name in seen:
        return AdapterState(
            name,
            source,
            state=FAILED,
            reason=NAME_CONFLICT,
            message=f"adapter name {name!r} is used twice in spec.adapters",
        ), None
    desired = desired_artifact(svc, adapter)
    artifact = _pick([a for a in artifacts if spec_of(a).get("sourceUri") == source], desired["metadata"]["name"])
    if artifact is None:
        return AdapterState(
            name,
            source,
            desired["metadata"]["name"],
            PENDING,
            CREATING_ARTIFACT,
            f"creating artifact {desired['metadata']['name']} for {source}",
        ), desired
    art_name = artifact["metadata"]["name"]
    status = status_of(artifact)
    info = status.get("adapter") or {}
    base, rank = (str(info.get("baseModel")) if info.get("baseModel") else None), _int(info.get("rank"))
    state = AdapterState(name, source, art_name, base_model=base, rank=rank)
    art_state = status.get("status") or ""
    if art_state == "Failed":
        ready = ready_condition(artifact)
        why = f"{ready.get('reason')}: {ready.get('message')}" if ready.get("reason") else "failed"
        return attrs.evolve(
            state, state=FAILED, reason=DOWNLOAD_FAILED, message=f"artifact {art_name} for {source} failed ({why})"
        ), None
    # The config is known from the size check (before the download) or from the download itself.
    problem = _incompatible(source, info, ids, rank_limit) if info else None
    if problem is not None:
        return attrs.evolve(state, state=FAILED, reason=problem[0], message=problem[1]), None
    if art_state != "Ready":  # its progress is on the artifact: the service is not woken by every patch of it
        return attrs.evolve(
            state,
            state=DOWNLOADING,
            reason=DOWNLOADING_REASON,
            message=f"artifact {art_name} is {art_state or 'Pending'}",
        ), None
    if not info:
        return attrs.evolve(
            state,
            state=FAILED,
            reason=CONFIG_INVALID,
            message=(
                f"no adapter_config.json was reported for {source} (status.adapter of artifact {art_name}): the files "
                "are not a LoRA adapter, or the download image does not read it; a LoRA adapter needs one"
            ),
        ), None
    return attrs.evolve(state, state=READY, reason=SERVED, claim=status.get("persistentVolumeClaim")), None


def _incompatible(source: str, info: Obj, ids: set[str], rank_limit: tuple[int | None, str]) -> tuple[str, str] | None:
    """``(reason, message)`` when an adapter's reported config rules it out, else ``None``."""
    if info.get("problem"):
        return CONFIG_INVALID, f"{source}: {info['problem']}; a LoRA adapter needs adapter_config.json"
    base, rank = (str(info["baseModel"]) if info.get("baseModel") else ""), _int(info.get("rank"))
    if _same_model(base, ids) is False:
        return BASE_MISMATCH, (
            f"adapter_config.json of {source} names base model {base!r}, but this service serves "
            f"{', '.join(sorted(ids))}: use an adapter trained on that model"
        )
    limit, where = rank_limit
    top = limit if limit is not None else LORA_RANKS[-1]
    if rank is not None and rank > top:
        return RANK_TOO_HIGH, (
            f"{source} has LoRA rank {rank}, above the limit {top} "
            f"({where or 'the highest rank vLLM takes'}): raise spec.adapterLimits.maxRank or "
            "use an adapter of lower rank"
        )
    return None


def _derived_rank(ranks: Iterable[int | None]) -> int:
    top = max((r for r in ranks if r is not None), default=DEFAULT_RANK)
    return next((r for r in LORA_RANKS if r >= top), LORA_RANKS[-1])


def plan_adapters(
    svc: Obj, artifacts: Sequence[Obj], model: Obj | None, template: Obj | None, user_args: Obj | None = None
) -> AdapterPlan:
    """What the adapters of ``svc`` need and how they stand (see the module docstring)."""
    specs = adapter_specs(svc)
    if not specs:
        return AdapterPlan()
    user_args = user_args or {}
    limits = ServiceView.of(svc).adapter_limits
    rank_limit = _limit(user_args, "max-lora-rank", limits.get("maxRank"))
    ids, names = base_ids(model, template), base_names(svc, model, template)
    states: list[AdapterState] = []
    create: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for adapter in specs:
        state, desired = _one(svc, adapter, artifacts, ids, names, seen, rank_limit)
        seen.add(state.name)
        states.append(state)
        if desired is not None:
            create[desired["metadata"]["name"]] = desired

    conflict = _user_conflict(user_args)
    if conflict:
        states = [
            attrs.evolve(s, state=FAILED, reason=LORA_CONFLICT, message=conflict) if s.served else s for s in states
        ]

    served = [s for s in states if s.served and s.claim]
    serving = _serving(served, user_args, limits) if served else None
    notes = [f"adapter {s.name}: {s.state} {s.reason}" + (f" ({s.message})" if s.message else "") for s in states]
    if serving is not None:
        notes.append(f"adapters: engine args {go_marshal(serving.engine_args)}")
        notes += [f"adapters: mount {m['name']} at {m['mountPath']} (read-only)" for m in serving.mounts]
    health, condition = _health(states)
    return AdapterPlan(tuple(states), tuple(create.values()), serving, health, condition, tuple(notes))


def _user_conflict(user_args: Obj) -> str:
    if user_args.get("lora-modules"):
        return (
            f"{ENGINE_ARGS} sets lora-modules, which conflicts with spec.adapters and replaces them: "
            "list the adapters in spec.adapters only and remove lora-modules from the env"
        )
    if user_args.get("enable-lora") is False:
        return f"{ENGINE_ARGS} sets enable-lora to false, which turns spec.adapters off: remove it"
    return ""


def _serving(served: Sequence[AdapterState], user_args: Obj, limits: Obj) -> AdapterServing:
    volumes, mounts, modules = [], [], []
    for adapter in served:
        volume = volume_name(adapter.name)
        path = posixpath.join(ADAPTER_ROOT, volume)
        volumes.append({"name": volume, "persistentVolumeClaim": {"claimName": adapter.claim, "readOnly": True}})
        mounts.append({"name": volume, "mountPath": path, "readOnly": True})
        modules.append(f"{adapter.name}={path}")
    max_loras = _int(limits.get("maxLoaded")) or len(served)
    max_rank = _int(limits.get("maxRank")) or _derived_rank(a.rank for a in served)
    args = {"enable-lora": True, "lora-modules": modules, "max-loras": max_loras, "max-lora-rank": max_rank}
    return AdapterServing(tuple(volumes), tuple(mounts), args)


def _health(states: Sequence[AdapterState]) -> tuple[Health | None, Condition | None]:
    failed = [s for s in states if s.state == FAILED]
    if failed:
        detail = "; ".join(f"{s.name}: {s.message or s.reason}" for s in failed)
        served = sum(1 for s in states if s.served)
        message = f"{len(failed)} of {len(states)} adapters cannot be served ({detail}); {served} served"
        return Health(State.DEGRADED, failed[0].reason, message), None
    waiting = [s for s in states if not s.served]
    if waiting:
        detail = "; ".join(f"{s.name}: {s.message or s.reason}" for s in waiting)
        return None, Condition.false(
            CONDITION, WAITING, f"waiting for the weights of {len(waiting)} adapter(s): {detail}"
        )
    return Health.ok(ALL_SERVED, f"all {len(states)} adapters are served: " + ", ".join(s.name for s in states)), None


def plan_for(svc: Obj, observed: Any, model: Obj | None, template: Obj | None, config: Obj) -> AdapterPlan:
    """:func:`plan_adapters` with the inputs taken from the service plan's observation."""
    if not adapter_specs(svc):
        return AdapterPlan()
    user_layers = [
        config.get("env") or (),
        () if template is None else TemplateView.of(template).env,
        ServiceView.of(svc).env,
    ]
    return plan_adapters(svc, observed.artifacts, model, template, user_engine_args(user_layers))
