"""Automatic template selection for an AIMService (F44, spec 2.11), and the whole resolution order. Pure.

:func:`select_template` picks the best template for a model and records, for
every candidate, why it was dropped or how it ranked (``render --explain``
prints :meth:`Selection.explain`). Filters, in order:

0. templates derived by a service for its overrides are not candidates (they
   are reached through their base, see :mod:`aim_core.service.overrides`);
1. status Ready;
2. profile type ``optimized``, unless ``spec.template.allowUnoptimized``
   (``preview`` does not pass either, as upstream and its docs);
3. ``spec.overrides``: metric and precision equal (case-insensitive, profile
   value first), GPU model the same when both are known, GPU count equal when
   both are above 0;
4. the GPU the template needs is in the cluster: its own model (spec, then
   profile), or, for a template naming none, the model the overrides ask for
   (the copy made for the overrides would need it, and that GPU also ranks
   it); no model → passes;
5. namespaced templates, when any is left, beat cluster ones.

The rest rank lexicographically by profile type (optimized, preview,
unoptimized), GPU (the vendors' preference, asked from the inventory), metric
(latency, throughput) and precision (fp4, int4, fp8, int8, fp16, bf16, fp32);
unknown values rank last. Measured values rank first when asked (opt-in, :mod:`.measured`).

Outcomes and Q4. The reasons are upstream's, the messages say exactly why:

* no template names the model → Pending ``TemplateNotFound`` (waiting for one);
* some do, none is Ready → Progressing ``TemplateNotReady`` (service Pending);
* none survives the filters → Pending ``TemplateNotFound``, the message naming
  the filter that removed the last ones (not optimized, overrides, GPUs);
* a tie on all four keys → Pending ``TemplateSelectionAmbiguous``: the reason
  upstream documents and its API declares but never sets. It is not Failed,
  because templates changing (one deleted, one turning NotAvailable) settles
  it without the user touching the service.

Resolution order (:func:`choose_template`): the template recorded in
``status.resolvedTemplate`` while it exists, is Ready and still fits the spec
(serves the resolved model; is the named template or its derived copy) (F45,
:func:`still_wanted`); else
``spec.template.name`` (:func:`resolve_explicit`: namespace, then cluster;
neither → MissingUpstream ``TemplateNotFound``, service Failed); else
:func:`select_template`. The result then goes through the overrides step
(:func:`aim_core.service.overrides.with_overrides`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.obj import Obj
from aim_core.service.measured import Preference, measure_ranks
from aim_core.service.overrides import Overrides, with_overrides
from aim_core.service.resolution import (
    Candidate,
    Filter,
    Rank,
    Selection,
    TemplateResolution,
    Verdict,
)
from aim_core.service.templates import (
    ScopedTemplate,
    is_derived,
    profile_type,
    same_gpu,
    sticky,
    template_gpu_model,
    template_status,
)
from aim_core.service.view import ServiceView
from aim_core.template import Scope, TemplateView


def _listing(items: Sequence[str], limit: int = 5) -> str:
    shown = list(items[:limit])
    if len(items) > limit:
        shown.append(f"and {len(items) - limit} more")
    return ", ".join(shown)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def select_template(
    model_name: str,
    namespaced: Sequence[Obj],
    cluster: Sequence[Obj],
    inventory: GpuInventory,
    *,
    allow_unoptimized: bool = False,
    overrides: Obj | None = None,
    namespace: str = "",
    prefer: Preference | None = None,
) -> Selection:
    """Pick the template for ``model_name`` (see the module docstring for filters, ranking and outcomes).

    :param namespaced: AIMServiceTemplates of the service namespace (any model).
    :param cluster: AIMClusterServiceTemplates (any model).
    :param inventory: the cluster's GPUs, for presence and preference.
    :param overrides: the service's ``spec.overrides``.
    :param namespace: the service namespace, for messages.
    :param prefer: measured ranking, when the service asks for it (:mod:`aim_core.service.measured`).
    """
    o = Overrides.read(overrides)
    pool = [
        ScopedTemplate(t, scope)
        for items, scope in ((namespaced, Scope.NAMESPACE), (cluster, Scope.CLUSTER))
        for t in sorted(items, key=lambda t: TemplateView.of(t).name)
        if TemplateView.of(t).model_name == model_name
    ]
    done: list[Candidate] = []

    def drop(alive: list[ScopedTemplate], flt: Filter, why: dict[int, str]) -> list[ScopedTemplate]:
        """Record the candidates ``why`` names as rejected by ``flt``; return the others."""
        done.extend(Candidate(s, Verdict.REJECTED, flt, why[i]) for i, s in enumerate(alive) if i in why)
        return [s for i, s in enumerate(alive) if i not in why]

    note = [f"asked for {prefer.describe()} ({prefer.source}); no candidate was left to rank"] if prefer else [""]

    def out(health: Health) -> Selection:
        order = {id(s): i for i, s in enumerate(pool)}
        return Selection(model_name, health, tuple(sorted(done, key=lambda c: order[id(c.template)])), note[0])

    alive = pool
    alive = drop(
        alive,
        Filter.DERIVED,
        {
            i: "derived by a service for its overrides; never auto-selected"
            for i, s in enumerate(alive)
            if is_derived(s.template)
        },
    )
    if not alive:
        return out(
            Health(
                State.PENDING,
                "TemplateNotFound",
                f"no template for model {model_name!r} exists: no AIMServiceTemplate in namespace "
                f"{namespace!r} and no AIMClusterServiceTemplate has this modelName; waiting for one",
                upstream=True,
            )
        )
    alive = drop(
        alive,
        Filter.READY,
        {i: f"not Ready ({template_status(s.template)})" for i, s in enumerate(alive) if not s.ready},
    )
    if not alive:
        states = [f"{c.name} ({template_status(c.template.template)})" for c in done if c.filter is Filter.READY]
        return out(
            Health.progressing(
                "TemplateNotReady",
                f"no template for model {model_name!r} is Ready yet: {_listing(states)}",
                upstream=True,
            )
        )
    ready = len(alive)
    if not allow_unoptimized:
        alive = drop(
            alive,
            Filter.OPTIMIZATION,
            {
                i: f"profile type {profile_type(s.template)}; only optimized templates are selected unless "
                "spec.template.allowUnoptimized is true"
                for i, s in enumerate(alive)
                if profile_type(s.template) != "optimized"
            },
        )
        if not alive:
            kinds = [f"{c.name}: {profile_type(c.template.template)}" for c in done if c.filter is Filter.OPTIMIZATION]
            return out(
                _not_found(
                    f"{_plural(ready, 'template')} for model {model_name!r} "
                    f"{'is' if ready == 1 else 'are'} Ready but none is optimized ({_listing(kinds)}); "
                    "set spec.template.allowUnoptimized: true to use them"
                )
            )
    if o:
        mismatched = {i: m for i, s in enumerate(alive) if (m := o.mismatches(s.template, inventory))}
        alive = drop(alive, Filter.OVERRIDES, {i: "; ".join(m) for i, m in mismatched.items()})
        if not alive:
            details = [f"{c.name}: {c.why}" for c in done if c.filter is Filter.OVERRIDES]
            return out(
                _not_found(
                    f"no usable template for model {model_name!r} matches spec.overrides "
                    f"({o.describe()}): {_listing(details)}"
                )
            )
    needs = {i: template_gpu_model(s.template) or o.gpu_model for i, s in enumerate(alive)}
    missing = {i: gpu for i, gpu in needs.items() if gpu and not inventory.has_model(gpu)}
    alive = drop(
        alive,
        Filter.GPU,
        {
            i: f"GPU {gpu} is not in the cluster"
            + (" (asked by spec.overrides)" if not template_gpu_model(alive[i].template) else "")
            for i, gpu in missing.items()
        },
    )
    if not alive:
        found = _listing(inventory.models) or "no GPUs"
        if o.gpu_model and all(same_gpu(gpu, o.gpu_model, inventory) for gpu in missing.values()):
            message = f"spec.overrides asks for GPU {o.gpu_model}, which is not in the cluster (found: {found})"
        else:
            wanted = sorted({gpu for gpu in missing.values()})
            message = f"no template's GPU ({_listing(wanted)}) is present in the cluster (found: {found})"
        return out(_not_found(message))
    if any(s.scope is Scope.NAMESPACE for s in alive):
        alive = drop(
            alive,
            Filter.SCOPE,
            {
                i: "cluster template; a namespaced one is usable and wins"
                for i, s in enumerate(alive)
                if s.scope is Scope.CLUSTER
            },
        )
    health, note[0] = _rank(model_name, alive, done, inventory, o, prefer)
    return out(health)


def _not_found(message: str) -> Health:
    return Health(State.PENDING, "TemplateNotFound", message, upstream=True)


def _rank(
    model_name: str,
    alive: list[ScopedTemplate],
    done: list[Candidate],
    inventory: GpuInventory,
    o: Overrides,
    prefer: Preference | None = None,
) -> tuple[Health, str]:
    ranks = [Rank.of(s.template, inventory, template_gpu_model(s.template) or o.gpu_model) for s in alive]
    ranks, note = measure_ranks([s.template for s in alive], ranks, prefer)
    best = min(r.order for r in ranks)
    top = [i for i, r in enumerate(ranks) if r.order == best]
    winner = alive[top[0]].name
    tied = len(top) > 1
    for i, (s, r) in enumerate(zip(alive, ranks, strict=True)):
        if i in top:
            verdict = Verdict.TIED if tied else Verdict.SELECTED
            others = [alive[j].name for j in top if j != i]
            why = f"ties with {_listing(others)} ({r.describe()})" if tied else f"best ({r.describe()})"
            done.append(Candidate(s, verdict, None, why, r))
        else:
            done.append(Candidate(s, Verdict.OUTRANKED, None, f"outranked by {winner} on {r.versus(ranks[top[0]])}", r))
    if tied:
        names = _listing([alive[i].name for i in top])
        return Health(
            State.PENDING,
            "TemplateSelectionAmbiguous",
            f"{len(top)} templates for model {model_name!r} rank equally ({ranks[top[0]].describe()}): "
            f"{names}; set spec.template.name to choose one, or remove the duplicates",
            upstream=True,
        ), note
    chosen = alive[top[0]]
    more = f" over {_plural(len(alive) - 1, 'other candidate')}" if len(alive) > 1 else ""
    return Health.ok(
        "Resolved", f"selected {chosen.describe()} ({ranks[top[0]].describe()}){more}", upstream=True
    ), note


def resolve_explicit(
    name: str,
    service: Obj,
    namespaced_by_name: Mapping[str, Obj],
    cluster_by_name: Mapping[str, Obj],
    inventory: GpuInventory | None = None,
) -> TemplateResolution:
    """Resolve ``spec.template.name`` (F43, F56; Q5 in :mod:`aim_core.service.overrides`).

    The base is the AIMServiceTemplate of that name in the service namespace,
    else the AIMClusterServiceTemplate; with overrides, an existing derived
    template is used even when its base is gone. Nothing found →
    MissingUpstream ``TemplateNotFound`` (service Failed) naming every lookup.
    """
    name = name.strip()
    view = ServiceView.of(service)
    o = Overrides.read(view.overrides)
    if name in namespaced_by_name:
        return with_overrides(
            ScopedTemplate(namespaced_by_name[name], Scope.NAMESPACE), service, namespaced_by_name, inventory
        )
    if name in cluster_by_name:
        return with_overrides(
            ScopedTemplate(cluster_by_name[name], Scope.CLUSTER), service, namespaced_by_name, inventory
        )
    derived_name = o.derived_name(name) if o else None
    if derived_name and derived_name in namespaced_by_name:
        existing = ScopedTemplate(namespaced_by_name[derived_name], Scope.NAMESPACE)
        return TemplateResolution(existing.health(), existing)
    looked = (
        f"AIMServiceTemplate {derived_name!r} (derived for spec.overrides) or {name!r}"
        if derived_name
        else (f"AIMServiceTemplate {name!r}")
    )
    message = f"template {name!r} not found: no {looked} in namespace {view.namespace!r} and no AIMClusterServiceTemplate {name!r}"
    return TemplateResolution(Health.error(Category.MISSING_UPSTREAM, "TemplateNotFound", message, upstream=True))


def choose_template(
    service: Obj,
    model_name: str | None,
    namespaced: Sequence[Obj],
    cluster: Sequence[Obj],
    inventory: GpuInventory,
    config: Obj | None = None,
) -> TemplateResolution:
    """Resolve the template of ``service``: sticky, explicit or auto, then overrides.

    :param model_name: the resolved model's name; ``None`` while the model is
        not resolved. An explicit ``spec.template.name`` is resolved anyway
        (upstream does not wait for the model); auto-selection then waits as
        Pending ``TemplateNotFound``.
    :param namespaced: AIMServiceTemplates of the service namespace (derived ones included).
    :param cluster: AIMClusterServiceTemplates.
    :param config: the merged runtime config spec (its ``templateSelection`` default).
    """
    view = ServiceView.of(service)
    ns_by_name = {TemplateView.of(t).name: t for t in namespaced}
    cl_by_name = {TemplateView.of(t).name: t for t in cluster}
    name = view.template_name
    kept = sticky(view.resolved_template, ns_by_name, cl_by_name)
    if kept is not None and not still_wanted(kept, service, model_name):
        kept = None  # the spec was edited since it was recorded: the spec wins
    if not name and model_name is None:
        return TemplateResolution(
            Health(
                State.PENDING,
                "TemplateNotFound",
                "waiting for the model to be resolved before choosing a template",
                upstream=True,
            )
        )
    selection = None
    if not name:
        assert model_name is not None
        selection = select_template(
            model_name,
            namespaced,
            cluster,
            inventory,
            allow_unoptimized=view.allow_unoptimized,
            overrides=view.overrides,
            namespace=view.namespace,
            prefer=Preference.read(service, config),
        )
    if kept is not None:
        result = with_overrides(kept, service, ns_by_name, inventory)
        if result.template is kept:
            # Say the same as the pass that chose it, so keeping a choice writes nothing new.
            if selection is not None and selection.chosen is not None and selection.chosen.name == kept.name:
                result = attrs.evolve(result, health=selection.health, selection=selection)
            elif selection is not None:
                better = selection.chosen.describe() if selection.chosen is not None else "none"
                message = (
                    f"keeping {kept.describe()} recorded in status.resolvedTemplate while it is Ready "
                    f"(auto-selection would now choose {better})"
                )
                result = attrs.evolve(result, health=attrs.evolve(result.health, message=message), selection=selection)
        return result
    if name:
        return resolve_explicit(name, service, ns_by_name, cl_by_name, inventory)
    assert selection is not None
    chosen = selection.chosen
    if chosen is None:
        return TemplateResolution(selection.health, selection=selection)
    result = with_overrides(chosen, service, ns_by_name, inventory)
    if result.template is chosen:
        result = attrs.evolve(result, health=selection.health)
    return attrs.evolve(result, selection=selection)


def still_wanted(recorded: ScopedTemplate, service: Obj, model_name: str | None) -> bool:
    """Whether the template recorded in ``status.resolvedTemplate`` still fits the spec (item 1 of the parity list).

    It must serve the resolved model (when known) and, when the spec names a
    template, be that template or the copy derived from it for the
    service's overrides. Upstream keeps a Ready recorded template whatever the
    spec now says; here a spec edit wins.
    """
    view = ServiceView.of(service)
    serves = TemplateView.of(recorded.template).model_name.strip()
    if model_name is not None and serves and serves != model_name:
        return False
    name = view.template_name
    if not name:
        return True
    o = Overrides.read(view.overrides)
    return recorded.name in {name, o.derived_name(name) if o else name}
