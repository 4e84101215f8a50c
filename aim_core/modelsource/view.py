"""AIMClusterModelSource as its code reads it: a typed, read-only view with the defaults applied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of

DEFAULT_MAX_MODELS = 100
#: status fields a plan carries over while the first sync after a restart runs
CARRIED_STATUS = ("availableModels", "modelsLimitReached", "lastSyncTime")


@attrs.frozen
class SourceView:
    """The fields of an AIMClusterModelSource the model-source code reads.

    :ivar sync_interval: ``spec.syncInterval`` as written (checked by ``intervals.sync_interval``).
    :ivar max_models: ``spec.maxModels``, :data:`DEFAULT_MAX_MODELS` when unset or 0.
    :ivar pull_secrets: the entries of ``spec.imagePullSecrets`` that are maps, as written.
    :ivar selectors_spec: the parts of ``spec`` the selectors are parsed from (registry, versions,
        filters, images), left raw: ``selectors.parse_selectors`` reports what is wrong in them.
    :ivar had_status: whether ``status`` was written before.
    :ivar carried: the :data:`CARRIED_STATUS` fields ``status`` holds.
    :ivar conditions: ``status.conditions`` as last written.
    """

    name: str
    uid: str | None = None
    generation: int | None = None
    sync_interval: Any = None
    max_models: int = DEFAULT_MAX_MODELS
    pull_secrets: tuple[Obj, ...] = ()
    selectors_spec: Obj = attrs.field(factory=dict)
    had_status: bool = False
    carried: Obj = attrs.field(factory=dict)
    conditions: tuple[Obj, ...] = ()

    @property
    def secret_names(self) -> list[str]:
        """Names in ``spec.imagePullSecrets``, in order, without blanks or repeats."""
        names = (s.get("name") for s in self.pull_secrets)
        return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))

    @classmethod
    def of(cls, source: Obj) -> SourceView:
        meta, spec, status = meta_of(source), spec_of(source), status_of(source)
        return cls(
            name=str(meta.get("name") or ""),
            uid=meta.get("uid"),
            generation=meta.get("generation"),
            sync_interval=spec.get("syncInterval"),
            max_models=spec.get("maxModels") or DEFAULT_MAX_MODELS,
            pull_secrets=tuple(s for s in spec.get("imagePullSecrets") or () if isinstance(s, Mapping)),
            selectors_spec={k: spec[k] for k in ("registry", "versions", "filters", "images") if k in spec},
            had_status=bool(status),
            carried={k: status[k] for k in CARRIED_STATUS if k in status},
            conditions=tuple(c for c in status.get("conditions") or () if isinstance(c, Mapping)),
        )


__all__ = ["CARRIED_STATUS", "DEFAULT_MAX_MODELS", "SourceView"]
