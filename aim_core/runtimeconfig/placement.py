"""Where a pod may run: node selector, tolerations and affinity (issue 20).

Used for inference pods (:mod:`aim_core.service.placement`) and artifact Jobs.

Pure functions over wire-format dicts.

* **Resolution**, per field: the AIMService's ``spec.nodeSelector``,
  ``spec.tolerations`` and ``spec.affinity`` replace the runtime config's
  (namespace config over cluster config, also per field, see
  :mod:`aim_core.runtimeconfig.resolution`); a field is never merged key by key
  across levels.
* **GPU node affinity** that the template resolved (F41) is combined with the
  user's node affinity, so both must hold: every GPU term is ANDed with every
  user term (a ``nodeSelectorTerms`` list is an OR of terms), preferences are
  concatenated. The user's pod (anti-)affinity is kept as written.
* **GPU tolerations**, as Kubernetes' ExtendedResourceToleration admission
  plugin: a pod whose container requests a GPU resource (one a GPU vendor plugin
  owns, or the template's GPU resource) tolerates ``key: <resource>, operator:
  Exists`` (every effect). A user toleration with the same key wins.
* **Artifact download and check-size Jobs** take the artifact's runtime config
  (they request no GPU, so nothing is added); discovery Jobs keep no placement.
* Every field says where it came from (:attr:`Placement.sources`), for
  ``aim-engine render --explain``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from aim_core.reconcile.obj import meta_of, spec_of
from aim_core.runtimeconfig.resolution import Resolution

FIELDS = ("nodeSelector", "tolerations", "affinity")


@attrs.frozen
class Placement:
    """The scheduling settings of one pod and where each came from."""

    node_selector: dict[str, str] | None = None
    tolerations: tuple[dict[str, Any], ...] = ()
    affinity: dict[str, Any] | None = None
    sources: tuple[str, ...] = ()

    @property
    def node_affinity(self) -> dict[str, Any] | None:
        return (self.affinity or {}).get("nodeAffinity") or None


def config_source(resolution: Resolution | None, key: str) -> str | None:
    """The runtime config object that ``key`` of the merged spec comes from, ``None`` when unset."""
    if resolution is None:
        return None
    for obj, kind in ((resolution.namespaced, "AIMRuntimeConfig"), (resolution.cluster, "AIMClusterRuntimeConfig")):
        if obj is not None and spec_of(obj).get(key):
            meta = meta_of(obj)
            where = f"{meta.get('namespace')}/{meta.get('name')}" if kind == "AIMRuntimeConfig" else meta.get("name")
            return f"{kind} {where}"
    return None


def user_placement(
    own: Mapping[str, Any], config: Mapping[str, Any], resolution: Resolution | None, owner: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The three user fields, the object's own value over the config's, and their sources.

    :param own: the object's spec (an AIMService's), or ``{}``.
    :param config: the merged runtime config spec.
    :param owner: how to name ``own`` in sources, e.g. ``AIMService team/chat``.
    """
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in FIELDS:
        if own.get(key):
            values[key], sources[key] = copy.deepcopy(own[key]), f"{owner} spec.{key}"
        elif config.get(key):
            values[key] = copy.deepcopy(config[key])
            sources[key] = f"{config_source(resolution, key) or 'the runtime config'} spec.{key}"
    return values, sources


# ---------------------------------------------------------------- affinity


def _and_terms(gpu: Mapping[str, Any], user: Mapping[str, Any]) -> dict[str, Any]:
    term: dict[str, Any] = {}
    for key in ("matchExpressions", "matchFields"):
        joined = [*copy.deepcopy(gpu.get(key) or []), *copy.deepcopy(user.get(key) or [])]
        if joined:
            term[key] = joined
    return term


def combine_node_affinity(gpu: Mapping[str, Any] | None, user: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A node affinity that holds where both ``gpu`` and ``user`` hold; ``None`` when both are empty."""
    if not gpu:
        return copy.deepcopy(dict(user)) if user else None
    if not user:
        return copy.deepcopy(dict(gpu))
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    out: dict[str, Any] = {}
    gpu_terms = (gpu.get(required_key) or {}).get("nodeSelectorTerms") or []
    user_terms = (user.get(required_key) or {}).get("nodeSelectorTerms") or []
    if gpu_terms and user_terms:
        out[required_key] = {"nodeSelectorTerms": [_and_terms(g, u) for g in gpu_terms for u in user_terms]}
    elif gpu_terms or user_terms:
        out[required_key] = {"nodeSelectorTerms": copy.deepcopy(list(gpu_terms or user_terms))}
    preferred = [*copy.deepcopy(gpu.get(preferred_key) or []), *copy.deepcopy(user.get(preferred_key) or [])]
    if preferred:
        out[preferred_key] = preferred
    return out or None


def combine_affinity(
    gpu_node_affinity: Mapping[str, Any] | None, user: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The pod's affinity: the user's, with its node affinity combined with the GPU's."""
    out = copy.deepcopy(dict(user or {}))
    node = combine_node_affinity(gpu_node_affinity, out.pop("nodeAffinity", None))
    if node:
        out["nodeAffinity"] = node
    return {k: v for k, v in out.items() if v} or None


# ---------------------------------------------------------------- tolerations


def requested_resources(resources: Mapping[str, Any] | None) -> set[str]:
    """Resource names a container asks for in requests or limits (non-zero)."""
    names = set()
    for section in ("requests", "limits"):
        for name, quantity in ((resources or {}).get(section) or {}).items():
            if str(quantity).strip() not in ("0", ""):
                names.add(str(name))
    return names


def gpu_tolerations(
    resources: Mapping[str, Any] | None, gpu_resources: Iterable[str], user: Iterable[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """``{key: <resource>, operator: Exists}`` for each requested GPU resource the user does not tolerate already."""
    taken = {t.get("key") for t in user}
    wanted = sorted(requested_resources(resources) & set(gpu_resources))
    return [{"key": name, "operator": "Exists"} for name in wanted if name not in taken]


# ---------------------------------------------------------------- the whole


def resolve_placement(
    own: Mapping[str, Any],
    config: Mapping[str, Any],
    resolution: Resolution | None,
    *,
    owner: str,
    gpu_node_affinity: Mapping[str, Any] | None = None,
    gpu_affinity_source: str = "template status.resolvedNodeAffinity",
    resources: Mapping[str, Any] | None = None,
    gpu_resources: Iterable[str] = (),
) -> Placement:
    """Node selector, tolerations and affinity of one pod, with their sources.

    :param own: the object's spec (AIMService), ``{}`` for objects without placement fields.
    :param config: the merged runtime config spec; ``resolution`` names its objects.
    :param gpu_node_affinity: the template's GPU node affinity, combined with the user's.
    :param resources: the container's resources; GPU resources among them are tolerated.
    :param gpu_resources: resource names that are GPUs (vendors' ``resource_names`` and the template's).
    """
    values, sources = user_placement(own, config, resolution, owner)
    lines = [f"placement: {key} from {sources[key]}" for key in FIELDS if key in sources]
    user_tolerations = list(values.get("tolerations") or [])
    added = gpu_tolerations(resources, gpu_resources, user_tolerations)
    for toleration in added:
        lines.append(f"placement: toleration {toleration['key']} (Exists) added: the pod requests that GPU resource")
    kept = sorted(requested_resources(resources) & set(gpu_resources) & {t.get("key") for t in user_tolerations})
    for name in kept:
        lines.append(f"placement: toleration for {name} as the user wrote it (wins over the added one)")
    affinity = combine_affinity(gpu_node_affinity, values.get("affinity"))
    if gpu_node_affinity:
        how = (
            "combined with the user's (both must hold)"
            if (values.get("affinity") or {}).get("nodeAffinity")
            else "as is"
        )
        lines.append(f"placement: GPU node affinity from {gpu_affinity_source}, {how}")
    return Placement(
        node_selector=dict(values["nodeSelector"]) if values.get("nodeSelector") else None,
        tolerations=tuple([*user_tolerations, *added]),
        affinity=affinity,
        sources=tuple(lines),
    )


def apply_to_pod(pod: dict[str, Any], placement: Placement | None) -> dict[str, Any]:
    """Set ``nodeSelector``, ``tolerations`` and ``affinity`` of a PodSpec dict (in place) when given."""
    if placement is None:
        return pod
    if placement.node_selector:
        pod["nodeSelector"] = dict(placement.node_selector)
    if placement.tolerations:
        pod["tolerations"] = copy.deepcopy(list(placement.tolerations))
    if placement.affinity:
        pod["affinity"] = copy.deepcopy(placement.affinity)
    return pod
