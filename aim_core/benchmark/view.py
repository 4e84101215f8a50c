"""AIMBenchmark as its code reads it: a typed, read-only view with the defaults applied."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.api.benchmark import DEFAULT_HISTORY_LIMIT
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of


def _map(value: Any) -> Obj:
    """``value`` when it is a map, else an empty one (a field the schema would refuse reads as unset)."""
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _maps(value: Any) -> tuple[Obj, ...]:
    return tuple(v for v in value or () if isinstance(v, Mapping)) if isinstance(value, list | tuple) else ()


@attrs.frozen
class BenchmarkView:
    """The fields of an AIMBenchmark the benchmark code reads.

    :ivar service_name: ``spec.target.serviceName``, stripped; "" for an endpoint.
    :ivar endpoint: ``spec.target.endpoint`` without a trailing ``/``; "" for a service.
    :ivar target_model: ``spec.target.model``; "" when unset (a service's own model is used).
    :ivar tool: ``spec.tool``; "" for the operator's default tool.
    :ivar image: ``spec.image``; "" for the tool plugin's image.
    :ivar tokenizer: ``spec.tokenizer``; "" for the target's model.
    :ivar scenarios: ``spec.scenarios``.
    :ivar concurrency: ``spec.concurrency``; ``()`` with request rates.
    :ivar request_rates: ``spec.requestRates``; ``()`` with concurrency levels.
    :ivar max_requests: ``spec.maxRequests``; ``None`` when unset.
    :ivar max_duration: ``spec.maxDuration`` as written; "" when unset.
    :ivar timeout: ``spec.timeout`` as written (the whole run's deadline); "" for the derived one.
    :ivar api_key_secret_ref: ``spec.apiKeySecretRef``; ``None`` when unset.
    :ivar hf_token_secret_ref: ``spec.hfTokenSecretRef``; ``None`` when unset.
    :ivar report_uri: ``spec.report.uri``; "" when unset.
    :ivar env: ``spec.env`` (the maps in it).
    :ivar resources: ``spec.resources``; ``None`` when unset.
    :ivar image_pull_secrets: ``spec.imagePullSecrets`` (the maps in it).
    :ivar history_limit: ``spec.historyLimit``, 5 when unset.
    :ivar owned: the run has an owner (a sweep's runs): never pruned by a history limit.
    :ivar deleting: ``metadata.deletionTimestamp`` is set.
    :ivar created: ``metadata.creationTimestamp``; "" before the API server saw it.
    :ivar state: ``status.status``; "" before the first reconcile.
    :ivar status: ``status`` as last written, for a finished run whose status is carried over.
    :ivar snapshot: ``status.target`` (the target when the run started); an empty map before.
    :ivar start_time: ``status.startTime``; "" before the Job started.
    :ivar completion_time: ``status.completionTime``; "" until the run finished.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    service_name: str = ""
    endpoint: str = ""
    target_model: str = ""
    tool: str = ""
    image: str = ""
    tokenizer: str = ""
    scenarios: tuple[str, ...] = ()
    concurrency: tuple[Any, ...] = ()
    request_rates: tuple[Any, ...] = ()
    max_requests: int | None = None
    max_duration: str = ""
    timeout: str = ""
    api_key_secret_ref: Obj | None = None
    hf_token_secret_ref: Obj | None = None
    report_uri: str = ""
    env: tuple[Obj, ...] = ()
    resources: Obj | None = None
    image_pull_secrets: tuple[Obj, ...] = ()
    history_limit: int = DEFAULT_HISTORY_LIMIT
    owned: bool = False
    deleting: bool = False
    created: str = ""
    state: str = ""
    status: Obj = attrs.field(factory=dict)
    snapshot: Obj = attrs.field(factory=dict)
    start_time: str = ""
    completion_time: str = ""

    @property
    def runs(self) -> int:
        """Scenario x load level runs of the tool (each bounded by ``maxDuration`` and ``maxRequests``)."""
        return len(self.scenarios) * len(self.concurrency or self.request_rates)

    @property
    def target_key(self) -> str:
        """``service/<name>`` or ``endpoint/<hash>``: which runs share a history."""
        if self.service_name:
            return f"service/{self.service_name}"
        return "endpoint/" + hashlib.sha256(self.endpoint.encode()).hexdigest()[:16]

    @classmethod
    def of(cls, run: Obj | BenchmarkView) -> BenchmarkView:
        """The view of ``run`` (a view is returned as it is)."""
        if isinstance(run, BenchmarkView):
            return run
        meta, spec, status = meta_of(run), spec_of(run), status_of(run)
        target = _map(spec.get("target"))
        max_requests = spec.get("maxRequests")
        api_key, hf_token, resources = spec.get("apiKeySecretRef"), spec.get("hfTokenSecretRef"), spec.get("resources")
        return cls(
            name=str(meta.get("name") or ""),
            namespace=str(meta.get("namespace") or ""),
            uid=str(meta.get("uid") or ""),
            service_name=_text(target.get("serviceName")),
            endpoint=str(target.get("endpoint") or "").rstrip("/"),
            target_model=str(target.get("model") or ""),
            tool=str(spec.get("tool") or ""),
            image=str(spec.get("image") or ""),
            tokenizer=str(spec.get("tokenizer") or ""),
            scenarios=tuple(str(s) for s in spec.get("scenarios") or ()),
            concurrency=tuple(spec.get("concurrency") or ()),
            request_rates=tuple(spec.get("requestRates") or ()),
            max_requests=max_requests if isinstance(max_requests, int) else None,
            max_duration=str(spec.get("maxDuration") or ""),
            timeout=str(spec.get("timeout") or ""),
            api_key_secret_ref=api_key if isinstance(api_key, Mapping) and api_key else None,
            hf_token_secret_ref=hf_token if isinstance(hf_token, Mapping) and hf_token else None,
            report_uri=str(_map(spec.get("report")).get("uri") or ""),
            env=_maps(spec.get("env")),
            resources=resources if isinstance(resources, Mapping) and resources else None,
            image_pull_secrets=_maps(spec.get("imagePullSecrets")),
            history_limit=int(spec.get("historyLimit") or DEFAULT_HISTORY_LIMIT),
            owned=bool(meta.get("ownerReferences")),
            deleting=bool(meta.get("deletionTimestamp")),
            created=str(meta.get("creationTimestamp") or ""),
            state=str(status.get("status") or ""),
            status=status,
            snapshot=_map(status.get("target")),
            start_time=str(status.get("startTime") or ""),
            completion_time=str(status.get("completionTime") or ""),
        )


__all__ = ["BenchmarkView"]
