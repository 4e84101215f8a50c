"""Health flowing between a model and its templates (F24, F25).

* :func:`templates_health`: the model's ``ServiceTemplates`` /
  ``ClusterServiceTemplates`` component, aggregated from every template whose
  ``spec.modelName`` is the model (hand-written ones included).
* :func:`model_health_for_template`: how a template reports its model. A model
  that is Failed or Degraded *only because of its templates* is reported as
  found, so a failing template does not fail its model which then fails the
  template again (the circular-failure guard, F25). A model failing for a
  reason of its own passes its state on as it is: a Degraded model (an image
  the registry does not answer for) makes its templates Degraded, not Failed.
* The guard works both ways: a template unhealthy *only because of its model*
  does not count against the model in :func:`templates_health` (else a
  Degraded model would turn Failed through its own templates, upstream's
  ``aimmodel/custom-models/nonexistent-image``).

Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from aim_core.reconcile.health import Health, State
from aim_core.reconcile.obj import Obj, status_of

NAMESPACED_COMPONENT = "ServiceTemplates"
CLUSTER_COMPONENT = "ClusterServiceTemplates"
TEMPLATE_CONDITIONS = frozenset({NAMESPACED_COMPONENT + "Ready", CLUSTER_COMPONENT + "Ready"})
_NOT_MODEL_FAILURES = TEMPLATE_CONDITIONS | {"Ready"}
MODEL_CONDITIONS = frozenset({"ModelReady", "ClusterModelReady"})  # a template's view of its model
_FRAMEWORK = ("ConfigValid", "AuthValid", "DependenciesReachable")

_ERROR = (State.FAILED.value, State.DEGRADED.value)
_WAITING = (State.PENDING.value, State.PROGRESSING.value, State.STARTING.value)


def _status(obj: Obj) -> str:
    return (status_of(obj).get("status")) or ""


def _names(templates: Iterable[Obj]) -> str:
    names = sorted(t["metadata"]["name"] for t in templates)
    shown = ", ".join(names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def templates_health(templates: Iterable[Obj], *, metadata_known: bool, expected: bool) -> Health:
    """The aggregated template component of a model (F24); reasons as upstream.

    :param templates: every template serving the model (by ``spec.modelName``).
    :param metadata_known: whether the model's image metadata is known (or not needed).
    :param expected: whether the model creates templates of its own.
    """
    templates = list(templates)
    total = len(templates)
    if not total:
        if not metadata_known:
            return Health.progressing("AwaitingMetadata", "waiting for the image metadata before creating templates")
        if expected:
            return Health.progressing("CreatingTemplates", "creating service templates")
        return Health.ok(
            "NoTemplatesExpected",
            "no templates expected: the image recommends no deployments and the model declares no custom templates",
        )
    awaiting_model = [t for t in templates if fails_only_because_of_model(t)]
    if awaiting_model and len(awaiting_model) == total:
        return Health.progressing(
            "TemplatesProgressing",
            f"{total} of {total} templates wait for this model to be usable: {_names(awaiting_model)}",
        )
    waiting_names = {t["metadata"]["name"] for t in awaiting_model}
    states = [State.PROGRESSING.value if t["metadata"]["name"] in waiting_names else _status(t) for t in templates]
    ready = [t for t, s in zip(templates, states) if s == State.READY.value]
    failed = [t for t, s in zip(templates, states) if s in _ERROR]
    unavailable = [t for t, s in zip(templates, states) if s == State.NOT_AVAILABLE.value]
    waiting = [t for t, s in zip(templates, states) if s in _WAITING]
    if len(ready) == total:
        return Health.ok("AllTemplatesReady", f"{total} of {total} templates are Ready")
    if len(failed) == total:
        return Health(State.FAILED, "AllTemplatesFailed", f"all {total} templates failed: {_names(failed)}")
    if len(unavailable) == total:
        return Health(
            State.NOT_AVAILABLE,
            "NoTemplatesAvailable",
            f"none of the {total} templates can run on this cluster's GPUs: {_names(unavailable)}",
        )
    if failed:
        return Health(
            State.DEGRADED, "SomeTemplatesDegraded", f"{len(failed)} of {total} templates failed: {_names(failed)}"
        )
    if waiting:
        return Health.progressing(
            "TemplatesProgressing", f"{len(ready)} of {total} templates are Ready; waiting for {_names(waiting)}"
        )
    if ready and len(ready) + len(unavailable) == total:
        return Health.ok(
            "SomeTemplatesReady",
            f"{len(ready)} of {total} templates are Ready; the others cannot run on this cluster's GPUs",
        )
    return Health.progressing("TemplatesProgressing", f"{len(ready)} of {total} templates are Ready")


def fails_on_its_own(model: Obj) -> bool:
    """Whether a Failed/Degraded model failed for a reason other than its templates (F25).

    True when a ``*Ready`` condition other than ``Ready`` and the template
    aggregate is False, or a framework condition (``ConfigValid``,
    ``AuthValid``, ``DependenciesReachable``) is False.
    """
    if _status(model) not in _ERROR:
        return False
    for cond in status_of(model).get("conditions") or ():
        kind = cond.get("type") or ""
        if cond.get("status") != "False" or kind in _NOT_MODEL_FAILURES:
            continue
        if kind.endswith("Ready") or kind in _FRAMEWORK:
            return True
    return False


def fails_only_because_of_model(template: Obj) -> bool:
    """Whether a Failed/Degraded template is so only because its model is (the reverse of :func:`fails_on_its_own`).

    True when its ``ModelReady``/``ClusterModelReady`` condition is False and no
    other ``*Ready`` condition (but ``Ready``) and no framework condition is.
    """
    if _status(template) not in _ERROR:
        return False
    model_false = False
    for cond in status_of(template).get("conditions") or ():
        kind = cond.get("type") or ""
        if cond.get("status") != "False" or kind == "Ready":
            continue
        if kind in MODEL_CONDITIONS:
            model_false = True
        elif kind.endswith("Ready") or kind in _FRAMEWORK:
            return False
    return model_false


def model_health_for_template(
    model: Obj, what: str, *, found_reason: str = "ModelFound", failed_reason: str = "ModelFailed"
) -> Health:
    """A template's ``ModelReady``/``ClusterModelReady`` component for an existing model (F25).

    ``what`` names the model in messages (``AIMModel ns/name``). For cluster
    templates pass ``ClusterModelFound``/``ClusterModelFailed``.
    """
    if fails_on_its_own(model):
        detail = next(
            (
                c.get("message")
                for c in status_of(model).get("conditions") or ()
                if c.get("type") == "Ready" and c.get("message")
            ),
            "",
        )
        return Health(
            State.DEGRADED if _status(model) == State.DEGRADED.value else State.FAILED,
            failed_reason,
            f"{what} is {_status(model)}" + (f": {detail}" if detail else ""),
            upstream=True,
        )
    return Health.ok(found_reason, f"{what} found", upstream=True)
