"""The engine layout of a replica that spans several nodes (``hardware.nodes`` above 1). Pure.

One replica runs ``nodes`` pods with ``gpus`` GPUs each; vLLM must split the model over exactly
``nodes x gpus`` GPUs. The degrees come from, lowest precedence first: the template's discovered
profile (``status.profile.engine_args``), then ``AIM_ENGINE_ARGS`` as the container gets it (runtime
config, template ``spec.env`` and the service's ``spec.env`` merged), then defaults:

* neither degree given: tensor parallel = GPUs per pod, pipeline parallel = nodes (each node holds
  whole layers; the traffic between nodes is one activation per layer, which plain Ethernet carries);
* one given: the other is what is left of ``nodes x gpus`` (cross-node tensor parallelism is
  ``tensor-parallel-size: 16, pipeline-parallel-size: 1`` on 2 x 8 GPUs);
* both given: used as they are.

``tensor x pipeline (x data)`` must equal ``nodes x gpus``, else ``InvalidParallelism`` with the
numbers. The arguments that tie the pods of a group together (``nnodes``, ``node-rank``,
``master-addr``) are the runtime builder's to set; written by hand they are refused
(``MultiNodeArgsSet``), as a hand-written ``lora-modules`` is with adapters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from aim_core.plugin.providers import EngineLayout
from aim_core.reconcile.envvars import ENGINE_ARGS
from aim_core.reconcile.health import Category
from aim_core.reconcile.plan import Issue
from aim_core.template import TemplateView

TENSOR = "tensor-parallel-size"
PIPELINE = "pipeline-parallel-size"
DATA = "data-parallel-size"
#: what the runtime builder sets per pod; never by hand
GROUP_ARGS = ("nnodes", "node-rank", "master-addr")
INVALID_PARALLELISM = "InvalidParallelism"
MULTI_NODE_ARGS_SET = "MultiNodeArgsSet"


def _args(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str) and value.strip():
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def env_engine_args(env: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``AIM_ENGINE_ARGS`` of a container env as an object (empty when unset or not an object)."""
    for entry in env:
        if entry.get("name") == ENGINE_ARGS:
            return _args(entry.get("value"))
    return {}


def _degree(args: Mapping[str, Any], *names: str) -> int | None | str:
    """A parallel degree from ``args`` (either spelling); ``None`` when unset, the raw text when not a whole number."""
    for name in names:
        if args.get(name) is None:
            continue
        value = args[name]
        if isinstance(value, bool):
            return str(value)
        if isinstance(value, int):
            return value if value >= 1 else str(value)
        text = str(value).strip()
        return int(text) if text.isdigit() and int(text) >= 1 else text
    return None


def _names(name: str) -> tuple[str, str]:
    return name, name.replace("-", "_")


def engine_layout(
    template: Mapping[str, Any] | TemplateView, env: Sequence[Mapping[str, Any]], nodes: int, gpus: int
) -> tuple[EngineLayout, list[str]] | Issue:
    """The layout of one replica on ``nodes`` pods of ``gpus`` GPUs each, and the ``render --explain`` lines
    that say where each degree came from; or the issue that refuses it."""
    tview = TemplateView.of(template)
    profile = _args((tview.profile or {}).get("engine_args"))
    user = env_engine_args(env)
    written = sorted(k for k in user if k in GROUP_ARGS or k.replace("_", "-") in GROUP_ARGS)
    if written:
        return Issue(
            Category.INVALID_SPEC,
            MULTI_NODE_ARGS_SET,
            f"{ENGINE_ARGS} sets {', '.join(written)}, which the multi-node runtime sets for each pod of a "
            f"{nodes}-node replica (rank, group size and leader address): remove "
            f"{'it' if len(written) == 1 else 'them'} from the env",
        )
    found: dict[str, tuple[int | None | str, str]] = {}
    for key in (TENSOR, PIPELINE, DATA):
        for where, args in ((ENGINE_ARGS, user), ("the template's profile", profile)):
            value = _degree(args, *_names(key))
            if value is not None:
                found[key] = (value, where)
                break
    bad = [f"{k} {v!r} (from {w})" for k, (v, w) in found.items() if isinstance(v, str)]
    total = nodes * gpus
    if bad:
        return Issue(
            Category.INVALID_SPEC,
            INVALID_PARALLELISM,
            f"{', '.join(bad)} is not a whole number of at least 1; a replica on {nodes} nodes x {gpus} GPUs "
            f"needs tensor x pipeline parallel = {total}",
        )
    tensor = found.get(TENSOR, (None, ""))[0]
    pipeline = found.get(PIPELINE, (None, ""))[0]
    data = found.get(DATA, (None, ""))[0] or 1
    assert not isinstance(tensor, str) and not isinstance(pipeline, str) and not isinstance(data, str)
    notes: list[str] = []
    if tensor is None and pipeline is None:
        tensor, pipeline = gpus, nodes
        notes.append(
            f"layout: tensor parallel {tensor} = GPUs per pod, pipeline parallel {pipeline} = nodes (defaults)"
        )
    elif tensor is None:
        assert pipeline is not None
        tensor = total // (pipeline * data) if total % (pipeline * data) == 0 else 0
        notes.append(
            f"layout: pipeline parallel {pipeline} from {found[PIPELINE][1]}; tensor parallel {tensor} is the rest"
        )
    elif pipeline is None:
        pipeline = total // (tensor * data) if total % (tensor * data) == 0 else 0
        notes.append(
            f"layout: tensor parallel {tensor} from {found[TENSOR][1]}; pipeline parallel {pipeline} is the rest"
        )
    else:
        notes.append(
            f"layout: tensor parallel {tensor} from {found[TENSOR][1]}, pipeline parallel {pipeline} from {found[PIPELINE][1]}"
        )
    if not tensor or not pipeline or tensor * pipeline * data != total:
        given = ", ".join(f"{k} {v} (from {w})" for k, (v, w) in found.items())
        return Issue(
            Category.INVALID_SPEC,
            INVALID_PARALLELISM,
            f"a replica on {nodes} nodes x {gpus} GPUs per pod has {total} GPUs, but {given} "
            f"{'does' if len(found) == 1 else 'do'} not multiply to {total}: set tensor-parallel-size x "
            f"pipeline-parallel-size{' x data-parallel-size' if DATA in found else ''} = {total} in {ENGINE_ARGS} "
            f"(e.g. {gpus} x {nodes}), or change hardware.nodes or hardware.gpu.requests",
        )
    args = {**user, TENSOR: tensor, PIPELINE: pipeline}
    notes.append(
        f"layout: {nodes} nodes x {gpus} GPUs = tensor parallel {tensor} x pipeline parallel {pipeline}"
        + (f" x data parallel {data}" if data > 1 else "")
    )
    return EngineLayout(nodes, gpus, tensor, pipeline, args), notes
