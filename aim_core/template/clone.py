"""Cloning cluster templates for another GPU (F87, ``hack/clone-templates-for-gpu.sh`` as a command). Pure.

Every AIMClusterServiceTemplate whose GPU model (resolved hardware, else the
spec) is ``from_gpu`` gets a copy for ``to_gpu``: the same spec with
``hardware.gpu.model`` replaced and ``AIM_GPU_MODEL=<from_gpu>`` in its env, so
the image runs the profile it has for the original GPU on the new one (how
upstream brings up a GPU its images have no profiles for yet). The copy's
name has the GPU replaced (``...-1x-mi300x-...`` -> ``...-1x-mi308x-...``), or,
when the name does not mention it, is the name cut to fit plus
``-<to_gpu>``. Only the spec and the user's labels travel: no status, owner, or labels saying who made the original.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from typing import Any

from aim_core.api.common import API_VERSION
from aim_core.reconcile.envvars import merge_env

GPU_MODEL_ENV = "AIM_GPU_MODEL"
# Labels that say who made and manages the original: the copy is the user's own.
_OWNERSHIP_LABELS = frozenset(
    {"aim.eai.amd.com/origin", "aim.eai.amd.com/cluster-model.name", "app.kubernetes.io/managed-by"}
)
_MAX_NAME = 253


def template_gpu(template: Mapping[str, Any]) -> str:
    """The template's GPU model: ``status.resolvedHardware.gpu.model``, else ``spec.hardware.gpu.model``."""
    resolved = (((template.get("status") or {}).get("resolvedHardware") or {}).get("gpu") or {}).get("model")
    declared = (((template.get("spec") or {}).get("hardware") or {}).get("gpu") or {}).get("model")
    return str(resolved or declared or "").strip()


def clone_name(name: str, from_gpu: str, to_gpu: str) -> str:
    """``name`` with ``from_gpu`` replaced by ``to_gpu`` (any case), else cut to fit plus ``-<to_gpu>``."""
    target = to_gpu.strip().lower()
    pattern = re.compile(re.escape(from_gpu.strip()), re.IGNORECASE)
    if from_gpu.strip() and pattern.search(name):
        return pattern.sub(target, name)[:_MAX_NAME].rstrip("-.")
    return f"{name[: _MAX_NAME - len(target) - 1].rstrip('-.')}-{target}"


def clone_template(template: Mapping[str, Any], from_gpu: str, to_gpu: str) -> dict[str, Any]:
    """The copy of one cluster template for ``to_gpu``."""
    meta = template.get("metadata") or {}
    spec = copy.deepcopy(dict(template.get("spec") or {}))
    hardware = dict(spec.get("hardware") or {})
    gpu = dict(hardware.get("gpu") or {})
    resolved = ((template.get("status") or {}).get("resolvedHardware") or {}).get("gpu") or {}
    if "requests" not in gpu and resolved.get("requests") is not None:
        gpu["requests"] = resolved["requests"]
    gpu.pop("minVram", None)  # a model and a minimum memory exclude each other
    gpu["model"] = to_gpu.strip()
    hardware["gpu"] = gpu
    spec["hardware"] = hardware
    spec["env"] = merge_env(list(spec.get("env") or []), [{"name": GPU_MODEL_ENV, "value": from_gpu.strip()}])
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in _OWNERSHIP_LABELS}
    out_meta: dict[str, Any] = {"name": clone_name(str(meta.get("name", "")), from_gpu, to_gpu)}
    if labels:
        out_meta["labels"] = labels
    return {"apiVersion": API_VERSION, "kind": "AIMClusterServiceTemplate", "metadata": out_meta, "spec": spec}


def clone_templates(templates: Iterable[Mapping[str, Any]], from_gpu: str, to_gpu: str) -> list[dict[str, Any]]:
    """Copies of the templates for ``from_gpu`` (compared without case), by name; none for ``to_gpu`` twice."""
    wanted = from_gpu.strip().upper()
    existing = {str((t.get("metadata") or {}).get("name", "")) for t in templates}
    out = []
    for template in sorted(templates, key=lambda t: str((t.get("metadata") or {}).get("name", ""))):
        if template_gpu(template).upper() != wanted:
            continue
        clone = clone_template(template, from_gpu, to_gpu)
        if clone["metadata"]["name"] in existing:
            continue  # cloned before: kubectl apply would change the existing copy, not add one
        out.append(clone)
    return out
