"""The AIMClusterModelSource plan: models to create and the status (F79, F80, Q15, Q27).

Pure: :func:`plan_source` takes the source and what the controller observed
(the latest sync's matches, the models this source already made) and
returns a :class:`~aim_core.reconcile.plan.Plan`.

* Every matched image not yet represented by a model of this source (same
  ``spec.image``) gets an AIMClusterModel named by rule 2.5, labelled
  ``aim.eai.amd.com/model-source`` and ``origin=auto-generated``, annotated with
  its registry, repository and tag, owned by the source (deleted with it).
* Append-only: existing models are never updated or deleted, whatever the
  registry or the filters say now. A model belongs to whoever made it: one that
  another source or a user made under the same name is never relabelled or
  adopted (the model is created with a POST, so even a model made a moment ago
  and not yet seen stays theirs). It counts as this source's match, and the
  ``ExistingModelsReady`` message names it and its source; once it is gone,
  this source creates its own at once (the controller is re-triggered by the
  deletion).
* ``discoveredModels`` counts the models this source's filters matched: its
  own, the ones it creates now, and ones another source or a user made for a
  matched image (left alone, but counted, as upstream plans them);
  ``maxModels`` caps that count. Matches are taken in selector
  order, repository by repository, newest version first.
* Components: ``ExistingModels`` (``Listed``), ``PullSecrets`` (only when the
  source names secrets), ``Spec`` (only when the spec has a problem: a selector
  that cannot be used, a ``syncInterval`` that is not a duration) and
  ``Filters`` (all succeeded → Ready ``AllFiltersSucceeded``; some failed →
  Degraded ``SomeFiltersFailed``; all failed → Failed ``AllFiltersFailed``),
  whose message names each failing entry, its registry and the reason.
* A spec to fix or a missing reference makes the source Failed with
  ``ConfigValid`` False (``InvalidSpec`` winning over ``ReferenceNotFound``), as
  the error taxonomy says for every kind; unlike other kinds the source still
  syncs what it can (a bad constraint fails only its selector, a garbage
  interval is replaced, a missing secret leaves public images listable), so the
  problem does not also hold back the models that can be made.
* ``MaxModelsLimitReached`` True ``LimitReached`` / False ``WithinLimit``;
  ``SyncIntervalValid`` False when ``spec.syncInterval`` had to be replaced.
* ``availableModels`` counts distinct matching images (Q27: upstream counts an
  image matched by two filters twice; we do not), ``modelsLimitReached`` is
  true exactly when matches were left without a model because of the limit,
  and ``lastSyncTime`` is the last sync in which anything could be listed
  (Q15: the newer document's "last successful sync").
* The plan asks to be looked at again when the next sync is due.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from typing import Any

from aim_core.modelsource.intervals import INVALID_SYNC_INTERVAL, Interval, retry_delay, sync_interval
from aim_core.modelsource.observed import Failure, Observed, SelectorResult, Sync
from aim_core.modelsource.selectors import Match, Selector
from aim_core.modelsource.versions import tag_key
from aim_core.modelsource.view import DEFAULT_MAX_MODELS, SourceView
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.labels import (
    MODEL_SOURCE_LABEL,
    ORIGIN_AUTO_GENERATED,
    ORIGIN_LABEL,
    SOURCE_REGISTRY_ANNOTATION,
    SOURCE_REPOSITORY_ANNOTATION,
    SOURCE_TAG_ANNOTATION,
)
from aim_core.reconcile.naming import cluster_model_name_from_source, sanitize_label_value
from aim_core.reconcile.obj import Obj, meta_of, spec_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import CLUSTER_MODELS

__all__ = [
    "DEFAULT_MAX_MODELS",
    "model_for",
    "model_name",
    "next_sync_delay",
    "order_matches",
    "plan_source",
    "source_label",
]

EXISTING_MODELS = "ExistingModels"
PULL_SECRETS = "PullSecrets"
FILTERS = "Filters"
SPEC = "Spec"
LIMIT_CONDITION = "MaxModelsLimitReached"
INTERVAL_CONDITION = "SyncIntervalValid"
_MAX_LISTED_FAILURES = 5  # per selector, in the FiltersReady message
_MAX_LISTED_SELECTORS = 10
SECRET_NOT_FOUND, INVALID_PULL_SECRET = "SecretNotFound", "InvalidPullSecret"  # as modelsource.secrets says them
WHILE_SYNCING_RECHECK = 300.0  # safety net; a finished sync wakes the source itself


def source_label(source_name: str) -> str:
    """The ``aim.eai.amd.com/model-source`` value of a source's models."""
    return sanitize_label_value(source_name) or "source"


def _rfc3339(ts: datetime.datetime) -> str:
    return ts.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def model_for(source: Obj | SourceView, match: Match) -> dict[str, Any]:
    """The AIMClusterModel a source creates for ``match`` (F79)."""
    view = source if isinstance(source, SourceView) else SourceView.of(source)
    model_spec: dict[str, Any] = {"image": match.image}
    secrets = [{"name": s["name"]} for s in view.pull_secrets if s.get("name")]
    if secrets:
        model_spec["imagePullSecrets"] = secrets
    return {
        "metadata": {
            "name": cluster_model_name_from_source(match.registry, match.repository, match.tag),
            "labels": {
                MODEL_SOURCE_LABEL: source_label(view.name),
                ORIGIN_LABEL: ORIGIN_AUTO_GENERATED,
            },
            "annotations": {
                SOURCE_REGISTRY_ANNOTATION: match.registry,
                SOURCE_REPOSITORY_ANNOTATION: match.repository,
                SOURCE_TAG_ANNOTATION: match.tag,
            },
        },
        "spec": model_spec,
    }


def order_matches(matches: Iterable[Match]) -> list[Match]:
    """Repository by repository, newest semver first, then other tags alphabetically."""
    by_repo: dict[str, list[Match]] = {}
    for m in matches:
        by_repo.setdefault(m.repository, []).append(m)
    ordered: list[Match] = []
    for repository in sorted(by_repo):
        group = by_repo[repository]
        semvers = sorted(
            (m for m in group if tag_key(m.tag) is not None), key=lambda m: tag_key(m.tag) or (), reverse=True
        )
        others = sorted(m for m in group if tag_key(m.tag) is None)
        ordered += semvers + others
    return ordered


def next_sync_delay(sync: Sync, interval: Interval) -> float:
    """Seconds after ``sync`` ended at which the next sync is due."""
    failures = [f for r in sync.results for f in r.failures]
    return retry_delay(
        interval.seconds,
        transient=any(f.transient for f in failures),
        permanent=any(not f.transient for f in failures),
        attempt=sync.attempt,
        retry_after=max((f.retry_after or 0.0 for f in failures), default=0.0) or None,
    )


def _failure_text(failures: Sequence[Failure]) -> str:
    shown = [f"{f.reason}: {f.message}" for f in failures[:_MAX_LISTED_FAILURES]]
    more = len(failures) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _filters_health(selectors: Sequence[Selector], results: Sequence[SelectorResult], matched: int) -> Health:
    if not selectors:
        return Health(State.FAILED, "NoFilters", "the source has neither images nor filters; set exactly one")
    failed = [(s, r) for s, r in zip(selectors, results) if not r.ok]
    total = len(selectors)
    if not failed:
        noun = "image matches" if matched == 1 else "images match"
        return Health.ok("AllFiltersSucceeded", f"{total} of {total} selectors synced; {matched} {noun}")
    parts = []
    for selector, result in failed[:_MAX_LISTED_SELECTORS]:
        if result.listed:
            parts.append(f"{selector.label} synced only partly: {_failure_text(result.failures)}")
        else:
            parts.append(f"{selector.label} failed: {_failure_text(result.failures)}")
    if len(failed) > _MAX_LISTED_SELECTORS:
        parts.append(f"and {len(failed) - _MAX_LISTED_SELECTORS} more selectors")
    detail = " | ".join(parts)
    if all(not r.listed for _, r in failed) and len(failed) == total:
        return Health(State.FAILED, "AllFiltersFailed", f"all {total} selectors failed: {detail}")
    return Health(State.DEGRADED, "SomeFiltersFailed", f"{len(failed)} of {total} selectors failed: {detail}")


def _carried_filters_health(source: SourceView) -> Health | None:
    """The previous ``FiltersReady`` verdict, kept while the first sync after a restart runs."""
    for cond in source.conditions:
        if cond.get("type") == f"{FILTERS}Ready":
            reason, message = cond.get("reason") or "", cond.get("message") or ""
            if cond.get("status") == "True":
                return Health.ok(reason, message)
            state = {"AllFiltersFailed": State.FAILED, "NoFilters": State.FAILED}.get(reason, State.DEGRADED)
            if reason == "Syncing":
                return None
            return Health(state, reason, message)
    return None


def _secrets_health(source: SourceView, observed: Observed) -> Health | None:
    names = [s.get("name") for s in source.pull_secrets]
    if not names:
        return None
    problems = observed.secret_problems
    if not problems:
        return Health.ok("SecretsFound", f"pull secrets {', '.join(map(str, names))} are usable")
    # a secret of the wrong type is a spec to fix, one that is not there a missing reference (both: Failed);
    # one that could not be read (SecretAccessFailed) may read next time: Degraded
    message = "; ".join(p.message for p in problems)
    reasons = {p.reason for p in problems}
    for reason, category in (
        (INVALID_PULL_SECRET, Category.INVALID_SPEC),
        (SECRET_NOT_FOUND, Category.MISSING_UPSTREAM),
    ):
        if reason in reasons:
            return Health.error(category, reason, message, upstream=True)
    return Health(State.DEGRADED, problems[0].reason, message)


def _spec_health(observed: Observed, interval: Interval) -> Health | None:
    """What is wrong with the spec itself (selectors, interval), or None: reported, not blocking (see above)."""
    invalid = [s.problem.message for s in observed.selectors if s.problem is not None]
    if interval.reason == INVALID_SYNC_INTERVAL:
        invalid.append(interval.message)
    if not invalid:
        return None
    return Health.error(Category.INVALID_SPEC, "InvalidSpec", "; ".join(invalid))


def plan_source(obj: Obj, observed: Observed) -> Plan:
    """Models to create and status for one AIMClusterModelSource."""
    plan = Plan()
    source = SourceView.of(obj)
    interval = sync_interval(source.sync_interval)
    max_models = source.max_models
    label = source_label(source.name)

    existing_images = {spec_of(m).get("image") for m in observed.models}
    plan.component(EXISTING_MODELS, _listed(len(observed.models), label))
    secrets = _secrets_health(source, observed)
    if secrets is not None:
        plan.component(PULL_SECRETS, secrets)
    spec = _spec_health(observed, interval)
    if spec is not None:
        plan.component(SPEC, spec)  # not blocking: the rest still syncs

    sync = observed.sync
    if sync is None:
        carried = _carried_filters_health(source) if source.had_status else None
        plan.component(FILTERS, carried or Health.progressing("Syncing", "first sync with the registries in progress"))
        plan.status["discoveredModels"] = len(observed.models)
        plan.status.update(source.carried)
        _interval_condition(plan, interval)
        plan.requeue(WHILE_SYNCING_RECHECK)
        return plan

    matches: dict[Match, None] = {}
    for result in sync.results:
        for m in order_matches(result.matches):
            matches.setdefault(m, None)
    plan.component(FILTERS, _filters_health(observed.selectors, sync.results, len(matches)))

    missing = [m for m in matches if m.image not in existing_images]
    room = max(max_models - len(observed.models), 0)
    created = found = skipped_for_limit = 0
    planned_names: set[str] = set()
    others: list[str] = []
    for m in missing:
        name = model_name(m)
        if name in planned_names:
            continue
        live = observed.model_named(name)
        owner = (meta_of(live).get("labels") or {}).get(MODEL_SOURCE_LABEL) if live else None
        if live is not None and owner == label:
            continue  # ours under another spelling of the image: already represented and counted
        if created + found >= room:
            skipped_for_limit += 1
            continue
        planned_names.add(name)
        if live is not None:
            # Made by another source or a user: left alone, but this source's filters matched it, so it counts
            # (discoveredModels and the limit, as upstream's wildcard test beside another source, issue 18).
            plan.notes.append(f"{m.image}: AIMClusterModel {name} exists and is not this source's; left alone")
            others.append(f"{name} ({f'source {owner}' if owner else 'not made by a source'})")
            found += 1
            continue
        plan.want(CLUSTER_MODELS, model_for(source, m), create_only=True)
        created += 1

    discovered = len(observed.models) + created + found
    plan.components[EXISTING_MODELS] = _listed(discovered - found, label, others)  # after this plan's creations
    plan.status["discoveredModels"] = discovered
    plan.status["availableModels"] = len(matches)
    plan.status["modelsLimitReached"] = skipped_for_limit > 0
    last_success = sync.last_success
    if last_success is not None:
        plan.status["lastSyncTime"] = _rfc3339(last_success)
    elif "lastSyncTime" in source.carried:
        plan.status["lastSyncTime"] = source.carried["lastSyncTime"]
    if skipped_for_limit:
        plan.conditions.append(
            _condition(
                LIMIT_CONDITION,
                "True",
                "LimitReached",
                f"Model creation limit reached ({discovered} models created, maxModels {max_models}). "
                f"{skipped_for_limit} available images not created as models.",
            )
        )
    else:
        plan.conditions.append(
            _condition(
                LIMIT_CONDITION,
                "False",
                "WithinLimit",
                f"{discovered} of at most {max_models} models created",
            )
        )
    _interval_condition(plan, interval)

    if observed.syncing:
        plan.requeue(WHILE_SYNCING_RECHECK)
    else:
        due = sync.finished_at + datetime.timedelta(seconds=next_sync_delay(sync, interval))
        plan.requeue(max((due - observed.now).total_seconds(), 1.0))
    return plan


_MAX_LISTED_OTHERS = 10


def _listed(count: int, label: str, others: Sequence[str] = ()) -> Health:
    message = f"{count} AIMClusterModels carry {MODEL_SOURCE_LABEL}={label}"
    if others:
        shown = ", ".join(others[:_MAX_LISTED_OTHERS])
        more = len(others) - _MAX_LISTED_OTHERS
        message += (
            f"; {len(others)} more matched images are represented by models made elsewhere, left as they are: "
            + shown
            + (f" and {more} more" if more > 0 else "")
        )
    return Health.ok("Listed", message)


def model_name(m: Match) -> str:
    """The name of the AIMClusterModel made for ``m`` (rule 2.5: from the image alone)."""
    return cluster_model_name_from_source(m.registry, m.repository, m.tag)


def _interval_condition(plan: Plan, interval: Interval) -> None:
    if interval.reason:
        plan.conditions.append(_condition(INTERVAL_CONDITION, "False", interval.reason, interval.message))


def _condition(type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message}
