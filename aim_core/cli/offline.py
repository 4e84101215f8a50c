"""``aim-engine render``: run the operator's planners offline over files.

The given AIM objects (with whatever status they carry) and cluster snapshot
(Nodes, Namespaces, existing children) go into a store exactly like the one
the operator fills from watches; every controller then observes and plans
each of its objects, and the result is printed: the objects the operator
would apply (owner references and labels included) and the status it would
write. No cluster is contacted: an observe step that would need the API
server gets an error, which shows up as a condition like it would live.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from aim_core.operator.controllers import build_controllers
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile import status as statusing
from aim_core.reconcile.errors import NetworkError
from aim_core.reconcile.resources import AIM_RESOURCES, NAMESPACES, NODES, PODS
from aim_core.reconcile.writes import build_status
from aim_core.runtime import applyset
from aim_core.runtime.controller import Context, Controller
from aim_core.runtime.store import Store

_BUILTIN = {(r.api_version, r.kind): r for r in (*AIM_RESOURCES, NODES, NAMESPACES, PODS)}


class OfflineKube:
    """Stands in for the API adapter: every call fails as if the server were unreachable."""

    async def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise NetworkError("refused", "offline render: no API server")

    get = list = read_log = apply = patch = create = replace = delete = _fail


def load_documents(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Every object under ``paths`` (see :mod:`aim_core.cli.inputs`), ``List`` kinds flattened.

    :raises aim_core.cli.inputs.InputError: a path that cannot be read, naming the file and line.
    """
    from aim_core.cli.inputs import load_documents as load

    return load(paths)


@attrs.define
class Rendered:
    """What the operator would do for one object."""

    obj: dict[str, Any]
    controller: str
    apply: list[dict[str, Any]]
    delete: list[str]
    status: dict[str, Any]
    notes: list[str]


def _fill_identity(doc: dict[str, Any]) -> dict[str, Any]:
    meta = doc.setdefault("metadata", {})
    if not meta.get("uid"):
        digest = hashlib.sha256(f"{doc.get('kind')}/{meta.get('namespace')}/{meta.get('name')}".encode()).hexdigest()
        meta["uid"] = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    meta.setdefault("generation", 1)
    return doc


def _resource_for(doc: dict[str, Any], refs: Iterable[ResourceRef]) -> ResourceRef | None:
    key = (doc.get("apiVersion"), doc.get("kind"))
    if key in _BUILTIN:
        return _BUILTIN[key]
    for ref in refs:
        if (ref.api_version, ref.kind) == key:
            return ref
    return None


async def render(
    docs: Sequence[dict[str, Any]],
    *,
    plugins: Any,
    operator_namespace: str = "aim-system",
    now: datetime.datetime | None = None,
    gpu_preference: Sequence[str] = (),
    on_object: Callable[[str, int], None] | None = None,
    skipped: list[dict[str, Any]] | None = None,
    failures: list[tuple[dict[str, Any], str]] | None = None,
) -> list[Rendered]:
    """Plan every object in ``docs`` as the operator would, without a cluster.

    :param gpu_preference: the operator's ``--gpu-preference`` (GPU models best first).
    :param on_object: called before each object is planned with its ``Kind ns/name`` and
        the number of objects to plan in all (progress).
    :param skipped: gets the documents of kinds no controller reads or watches.
    :param failures: gets ``(object, error)`` for each object whose planning raised (a defect, since
        the operator meets the same object); without it the error propagates.
    """
    from aim_core.operator.settings import Settings

    now = now or datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    settings = Settings(operator_namespace=operator_namespace, gpu_preference=tuple(gpu_preference))
    controllers: list[Controller] = build_controllers(plugins, settings)
    store = Store()
    for controller in controllers:
        controller.setup(store)
    known = [ref for c in controllers for ref in [c.resource, *(w.resource for w in c.watches()), *c.extra_resources()]]
    namespaces = set()
    for doc in docs:
        ref = _resource_for(doc, known)
        if ref is None:
            if skipped is not None:
                skipped.append(doc)
            continue
        doc = _fill_identity(dict(doc))
        store.upsert(ref, doc)
        if doc["metadata"].get("namespace"):
            namespaces.add(doc["metadata"]["namespace"])
    for ns in namespaces - {o["metadata"]["name"] for o in store.list(NAMESPACES)}:
        store.upsert(NAMESPACES, {"metadata": {"name": ns}, "status": {"phase": "Active"}})
    ctx = Context(
        store=store,
        kube=OfflineKube(),
        plugins=plugins,
        operator_namespace=operator_namespace,
        extras={"offline": True},
    )  # observe steps ask no registry either
    out: list[Rendered] = []
    total = sum(len(store.list(c.resource)) for c in controllers)
    for controller in controllers:
        for obj in sorted(
            store.list(controller.resource), key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"]["name"])
        ):
            if on_object is not None:
                on_object(_ident(obj), total)
            try:
                observed = await controller.observe(ctx, obj)
                plan = controller.plan(obj, observed)
                issues = list(plan.issues)
                apply: list[dict[str, Any]] = []
                if statusing.should_apply([(i.category, i.reason, i.message) for i in issues]):
                    apply = [
                        applyset.prepare(d, obj, controller.name, plan.labels)
                        for d in sorted(plan.apply, key=lambda d: d.sort_key)
                    ]
                status, _ = build_status(controller, obj, plan, issues, now=now)
            except Exception as exc:  # noqa: BLE001 - one object the planners choke on must not hide the others
                if failures is None:
                    raise
                failures.append((obj, f"{type(exc).__name__}: {exc}"))
                continue
            deletes = [f"{d.resource.kind} {d.namespace or ''}/{d.name}" for d in plan.delete]
            notes = list(plan.notes)
            if obj.get("kind") == "AIMService" and (note := model_note(obj, status)):
                notes.insert(0, note)
            out.append(Rendered(obj, controller.name, apply, deletes, status, notes))
    return out


def format_rendered(results: Sequence[Rendered], *, explain: bool = False, only_kinds: set[str] | None = None) -> str:
    """YAML documents: for each object, what would be applied and the status it would get."""
    chunks: list[str] = []
    for r in results:
        kind = r.obj["kind"]
        if only_kinds and kind not in only_kinds:
            continue
        ident = _ident(r.obj)
        header = [f"# ---- {ident}: status {r.status.get('status', '-')}"]
        if explain:
            header += [f"#   {line}" for note in r.notes for line in note.splitlines()]
        report = {"object": ident, "status": r.status}
        if r.delete:
            report["delete"] = r.delete
        chunks.append("\n".join(header) + "\n" + yaml.safe_dump(report, sort_keys=False))
        for child in r.apply:
            cmeta = child["metadata"]
            chunks.append(
                f"# {ident} applies {child['kind']} {cmeta.get('namespace', '')}/{cmeta['name']}\n"
                + yaml.safe_dump(child, sort_keys=False)
            )
    return "---\n".join(chunks)


def _ident(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{obj.get('kind')} {meta.get('namespace') + '/' if meta.get('namespace') else ''}{meta['name']}"


# ---------------------------------------------------------------------------
# The summary: one row per AIMService
# ---------------------------------------------------------------------------

SUMMARY_COLUMNS = tuple(c.upper() for c in ("service", "template", "why", "status", "would apply"))

_SELECTED = re.compile(r"selected (\S+) (\S+) \((?P<details>[^)]*)\)(?P<rest>.*)")
_NAMED = re.compile(r"(\S+) (\S+) is Ready")


@attrs.frozen
class ServiceSummary:
    """What ``render`` concluded for one AIMService."""

    service: str  # ns/name
    template: str  # the chosen template's name, "-" for none
    why: str  # why that template (or why none)
    status: str
    applies: tuple[str, ...]  # "Kind name" of each object the operator would apply, then "delete Kind ns/name"

    def row(self) -> tuple[str, str, str, str, str]:
        return (self.service, self.template, self.why, self.status, ", ".join(self.applies) or "-")

    def to_json(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "template": self.template,
            "why": self.why,
            "status": self.status,
            "applies": list(self.applies),
        }


def summarize(results: Sequence[Rendered]) -> list[ServiceSummary]:
    """One :class:`ServiceSummary` per AIMService in ``results``, in their order."""
    rows = []
    for r in results:
        if r.obj.get("kind") != "AIMService":
            continue
        meta = r.obj["metadata"]
        template = (r.status.get("resolvedTemplate") or {}).get("name") or "-"
        applies = tuple(f"{c['kind']} {c['metadata']['name']}" for c in r.apply) + tuple(
            f"delete {d}" for d in r.delete
        )
        rows.append(
            ServiceSummary(
                f"{meta.get('namespace')}/{meta['name']}",
                template,
                _why(r, template),
                r.status.get("status") or "-",
                applies,
            )
        )
    return rows


def _why(r: Rendered, template: str) -> str:
    ready = next((c for c in r.status.get("conditions") or () if c.get("type") == "Ready"), None)
    cause = (ready or {}).get("reason")
    if (
        ready is not None
        and ready.get("status") != "True"
        and (r.status.get("status") in _NOT_PROGRESSING or cause not in _ON_ITS_WAY)
    ):
        # not on its way: the cause, not the step it is stuck at (an unknown model, not "waiting for the model")
        return ": ".join(p for p in (ready.get("reason"), ready.get("message")) if p)
    note = next((n.split(": ", 1)[1] for n in r.notes if n.startswith("template: ")), "")
    note = note.removeprefix("Resolved: ")
    if m := _SELECTED.match(note):
        return f"auto-selected ({m['details']}){m['rest']}"
    if _NAMED.match(note):
        return "named in spec.template"
    if template != "-" and not note:
        return "resolved earlier (status.resolvedTemplate)"
    condition = next((c for c in r.status.get("conditions") or () if c.get("type") == "TemplateReady"), None)
    if condition is not None and condition.get("status") != "True":
        return f"{condition.get('reason')}: {condition.get('message')}"
    return note or "-"


_ON_ITS_WAY = ("Progressing",)  # the Ready reason of a service that is coming up as it should
_NOT_PROGRESSING = ("Failed", "Degraded", "NotAvailable")


def model_note(obj: dict[str, Any], status: dict[str, Any]) -> str | None:
    """How an AIMService's model was resolved: what the spec asks for, what it became, and the condition."""
    asked = (obj.get("spec") or {}).get("model") or {}
    if not isinstance(asked, dict):
        return None
    if asked.get("name"):
        wanted = f"spec.model.name {asked['name']}"
    elif asked.get("image"):
        wanted = f"spec.model.image {asked['image']}"
    elif asked.get("custom"):
        wanted = "spec.model.custom"
    else:
        wanted = "spec.model"
    resolved = status.get("resolvedModel") or {}
    target = (
        f"{resolved.get('kind')} {resolved['namespace'] + '/' if resolved.get('namespace') else ''}{resolved.get('name')}"
        if resolved.get("name")
        else "nothing"
    )
    condition = next((c for c in status.get("conditions") or () if c.get("type") == "ModelReady"), None)
    why = f" ({condition.get('reason')}: {condition.get('message')})" if condition else ""
    return f"model: {wanted} -> {target}{why}"


def format_table(rows: Sequence[Sequence[str]], prefix: str = "") -> str:
    """Rows (the first being the header) as aligned plain-text columns, each line starting with ``prefix``."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "".join(f"{prefix}{line}\n" for line in lines)


def format_summary(summary: Sequence[ServiceSummary], prefix: str = "") -> str:
    """The summary table as plain text (``prefix="# "`` makes it YAML comments)."""
    if not summary:
        return f"{prefix}no AIMService in the input\n"
    return format_table([SUMMARY_COLUMNS, *(s.row() for s in summary)], prefix)
