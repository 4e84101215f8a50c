"""LoRA adapters of a service: the names and reasons they report, and the values their plan produces. Pure."""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.reconcile import labels as lbl
from aim_core.reconcile.conditions import Condition
from aim_core.reconcile.envvars import ENGINE_ARGS
from aim_core.reconcile.gojson import go_marshal
from aim_core.reconcile.health import Health
from aim_core.service.adapter_inputs import adapter_artifacts as adapter_artifacts
from aim_core.service.adapter_inputs import adapter_sources as adapter_sources
from aim_core.service.adapter_inputs import adapter_specs as adapter_specs
from aim_core.service.adapter_inputs import artifact_view as artifact_view
from aim_core.service.adapter_inputs import base_ids as base_ids
from aim_core.service.adapter_inputs import base_names as base_names
from aim_core.service.adapter_inputs import user_engine_args as user_engine_args

ADAPTERS = "Adapters"  #: component, and the condition type AdaptersReady
CONDITION = "AdaptersReady"
ADAPTER_ROOT = "/workspace/adapters"
VOLUME_PREFIX = "adapter-"
ADAPTER_LABEL = lbl.AIM_PREFIX + "adapter"
DEFAULT_RANK = 16

# adapter states (status.adapters[].state)
PENDING, DOWNLOADING, READY, FAILED = "Pending", "Downloading", "Ready", "Failed"

# reasons (documented in docs/troubleshooting.md)
SERVED = "Served"
CREATING_ARTIFACT = "CreatingArtifact"
DOWNLOADING_REASON = "Downloading"
DOWNLOAD_FAILED = "AdapterDownloadFailed"
BASE_MISMATCH = "AdapterBaseModelMismatch"
RANK_TOO_HIGH = "AdapterRankTooHigh"
CONFIG_INVALID = "AdapterConfigInvalid"
NAME_CONFLICT = "AdapterNameConflict"
LORA_CONFLICT = "LoraModulesConflict"
ALL_SERVED = "AllAdaptersServed"
WAITING = "AdaptersDownloading"
WAITING_FOR_BASE = "WaitingForModel"


@attrs.frozen
class AdapterState:
    """One adapter as this reconcile sees it."""

    name: str
    source_uri: str
    artifact: str | None = None
    state: str = PENDING
    reason: str = ""
    message: str = ""
    base_model: str | None = None
    rank: int | None = None
    claim: str | None = None  #: the artifact's PVC, when served

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "sourceUri": self.source_uri,
            "state": self.state,
            "reason": self.reason,
        }
        optional = {"artifact": self.artifact, "message": self.message, "baseModel": self.base_model, "rank": self.rank}
        out.update({k: v for k, v in optional.items() if v not in (None, "")})
        return out

    @property
    def served(self) -> bool:
        return self.state == READY


@attrs.frozen
class AdapterServing:
    """What the served adapters add to the inference container."""

    volumes: tuple[dict[str, Any], ...]
    mounts: tuple[dict[str, Any], ...]
    engine_args: dict[str, Any]

    def env(self) -> tuple[dict[str, Any], ...]:
        return ({"name": ENGINE_ARGS, "value": go_marshal(self.engine_args)},)


@attrs.frozen
class AdapterPlan:
    """Everything :func:`plan_adapters` decided."""

    adapters: tuple[AdapterState, ...] = ()
    create: tuple[dict[str, Any], ...] = ()  #: artifacts to create
    serving: AdapterServing | None = None
    health: Health | None = None  #: the Adapters component, when ready or failed
    condition: Condition | None = None  #: AdaptersReady while only downloading (no component)
    notes: tuple[str, ...] = ()

    def status(self) -> dict[str, Any]:
        if not self.adapters:
            return {}
        served = sum(1 for a in self.adapters if a.served)
        return {"adapters": [a.status() for a in self.adapters], "adapterSummary": f"{served}/{len(self.adapters)}"}
