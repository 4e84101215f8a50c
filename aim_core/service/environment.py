"""The environment of a service's serving container: layers from runtime config, model, template and service, and the AIM_ENGINE_ARGS check (F48). Pure."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from aim_core.reconcile.envvars import ENGINE_ARGS, layer_env
from aim_core.reconcile.health import Category
from aim_core.reconcile.plan import Issue
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView

CACHE_PATH = "/workspace/cache"

DEFAULT_ENV: tuple[Mapping[str, str], ...] = (
    {"name": "AIM_CACHE_PATH", "value": CACHE_PATH},
    {"name": "VLLM_ENABLE_METRICS", "value": "true"},
)
INVALID_ENGINE_ARGS = "InvalidEngineArgs"
# ---------------------------------------------------------------- environment


@attrs.frozen
class EnvLayer:
    """One layer of the inference container env; ``source`` names it in messages."""

    source: str
    env: tuple[Mapping[str, Any], ...]
    user: bool = True  #: written by a user (checked for problems), not by the operator


def _object_name(kind: str, namespace: str, name: str) -> str:
    return f"{kind} {namespace}/{name or '?'}" if namespace else f"{kind} {name or '?'}"


def env_layers(
    service: Mapping[str, Any], template: Mapping[str, Any], template_scope: str, config: Mapping[str, Any]
) -> list[EnvLayer]:
    """The env layers of F49, lowest precedence first.

    Defaults; runtime config ``env``; ``AIM_PROFILE_ID``/``AIM_METRIC``/
    ``AIM_PRECISION`` from the template *spec* when set; template
    ``spec.env``; ``AIM_MODEL_ID`` from the template's first model source;
    service ``spec.env``. Upstream appends the template-derived variables
    without merging; here they merge like every layer, so no name occurs twice.
    """
    view, tview = ServiceView.of(service), TemplateView.of(template)
    kind = "AIMClusterServiceTemplate" if template_scope == "Cluster" else "AIMServiceTemplate"
    what = _object_name(kind, "" if template_scope == "Cluster" else tview.namespace, tview.name)
    wanted = (("AIM_PROFILE_ID", tview.profile_id), ("AIM_METRIC", tview.metric), ("AIM_PRECISION", tview.precision))
    profile = tuple({"name": env, "value": value} for env, value in wanted if value)
    sources = tview.model_sources
    model_id = (sources[0] or {}).get("modelId") if sources else None
    return [
        EnvLayer("operator defaults", DEFAULT_ENV, user=False),
        EnvLayer(f"runtime config {view.config_name!r} env", tuple(config.get("env") or ())),
        EnvLayer(f"{what} spec profileId/metric/precision", profile, user=False),
        EnvLayer(f"{what} spec.env", tview.env),
        EnvLayer(
            f"{what} spec.modelSources",
            ({"name": "AIM_MODEL_ID", "value": model_id},) if model_id else (),
            user=False,
        ),
        EnvLayer(f"{_object_name('AIMService', view.namespace, view.name)} spec.env", view.env),
    ]


def _engine_args_problem(value: str) -> str | None:
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        return f"is not valid JSON ({exc})"
    if not isinstance(parsed, dict):
        return f"is JSON but not an object (got {type(parsed).__name__})"
    return None


def engine_args_issue(layers: Iterable[EnvLayer]) -> Issue | None:
    """InvalidSpec ``InvalidEngineArgs`` naming every user layer whose ``AIM_ENGINE_ARGS`` is not a JSON object.

    Values from ``valueFrom`` and empty values are not checked. ``None`` when all are fine.
    """
    problems = []
    for layer in layers:
        if not layer.user:
            continue
        for entry in layer.env:
            value = entry.get("value")
            if entry.get("name") != ENGINE_ARGS or not isinstance(value, str) or not value.strip():
                continue
            problem = _engine_args_problem(value)
            if problem:
                problems.append(f"{ENGINE_ARGS} in {layer.source} {problem}")
    if not problems:
        return None
    return Issue(
        Category.INVALID_SPEC,
        INVALID_ENGINE_ARGS,
        "; ".join(problems) + f'. {ENGINE_ARGS} must be a JSON object, e.g. {{"max-model-len": 8192}}, '
        "so that the layers can be merged",
    )


def container_env(layers: Iterable[EnvLayer]) -> list[dict[str, Any]]:
    """The merged env, sorted by name (``AIM_ENGINE_ARGS`` objects deep-merged across layers)."""
    return layer_env(*(layer.env for layer in layers))
