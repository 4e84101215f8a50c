"""The API server's answers that the emulator imitates, pinned on both backends (emulator and kube-apiserver 1.24).

Each test sends the same requests to either backend and asserts the answer the real server gives, body
included, so that a test passing on the emulator means what it would on a cluster.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx

SVC = "aim.eai.amd.com/v1alpha1/aimservices"
TC = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
NS = "parity"
GROUP = "aim.eai.amd.com"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
CONDITION = {
    "type": "Ready",
    "status": "True",
    "reason": "Running",
    "message": "serving",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}


def service(name: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "AIMService", "metadata": {"name": name}}
    if spec is not None:
        body["spec"] = spec
    return body


def required(*fields: str) -> list[dict[str, str]]:
    return [{"reason": "FieldValueRequired", "message": "Required value", "field": f} for f in fields]


def invalid_body(kind: str, name: str, causes: list[dict[str, str]]) -> dict[str, Any]:
    """The Status body kube-apiserver answers a write that fails validation with."""
    problems = [f"{c['field']}: {c['message']}" for c in causes]
    listed = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{kind}.{GROUP} "{name}" is invalid: {listed}',
        "reason": "Invalid",
        "details": {"name": name, "group": GROUP, "kind": kind, "causes": causes},
        "code": 422,
    }


def assert_invalid(response: httpx.Response, kind: str, name: str, causes: list[dict[str, str]]) -> None:
    assert response.status_code == 422, response.text
    assert response.json() == invalid_body(kind, name, causes)


def assert_invalid_unordered(response: httpx.Response, kind: str, name: str, causes: list[dict[str, str]]) -> None:
    """As :func:`assert_invalid`, for causes from several fields, which the real server lists in no fixed order
    (it walks an object's properties in Go's map order; only the ``required`` of one object keep theirs)."""
    assert response.status_code == 422, response.text
    body = response.json()
    got = body["details"].pop("causes")
    assert sorted(got, key=lambda c: c["field"]) == sorted(causes, key=lambda c: c["field"])
    head, _, listed = body.pop("message").partition(" is invalid: [")
    assert head == f'{kind}.{GROUP} "{name}"'
    assert sorted(listed.removesuffix("]").split(", ")) == sorted(f"{c['field']}: {c['message']}" for c in causes)
    expected = invalid_body(kind, name, causes)
    del expected["details"]["causes"], expected["message"]
    assert body == expected


async def _namespace(api: httpx.AsyncClient) -> None:
    made = await api.post(
        "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    )
    assert made.status_code == 201, made.text


async def test_a_missing_required_field_is_refused_on_create_update_patch_and_apply(kube, api):
    """`spec.model` of an AIMService is required: every kind of write without it is 422 Invalid and changes nothing."""
    await _namespace(api)
    services = kube.path(SVC, NS)

    assert_invalid(await api.post(services, json=service("a", {})), "AIMService", "a", required("spec.model"))
    # null where the schema does not allow it is pruned first, so the field is missing
    assert_invalid(
        await api.post(services, json=service("a", {"model": None})), "AIMService", "a", required("spec.model")
    )
    applied = await api.patch(f"{services}/a", params={"fieldManager": "t"}, json=service("a", {}), headers=APPLY)
    assert_invalid(applied, "AIMService", "a", required("spec.model"))
    dry = await api.post(services, params={"dryRun": "All"}, json=service("a", {"replicas": 2}))
    assert_invalid(dry, "AIMService", "a", required("spec.model"))
    assert kube.get(SVC, NS, "a") is None
    # an AIMService without a spec has nothing that requires a model
    assert (await api.post(services, json=service("bare"))).status_code == 201

    made = await api.post(services, json=service("s", {"model": {"name": "qwen"}}))
    assert made.status_code == 201, made.text
    removed = await api.patch(f"{services}/s", json=[{"op": "remove", "path": "/spec/model"}], headers=JSON_PATCH)
    assert_invalid(removed, "AIMService", "s", required("spec.model"))
    merged = await api.patch(f"{services}/s", json={"spec": {"model": None}}, headers=MERGE)
    assert_invalid(merged, "AIMService", "s", required("spec.model"))
    replaced = copy.deepcopy(made.json())
    replaced["spec"] = {"replicas": 3}
    assert_invalid(await api.put(f"{services}/s", json=replaced), "AIMService", "s", required("spec.model"))
    reapplied = await api.patch(
        f"{services}/s",
        params={"fieldManager": "t", "force": "true"},
        json=service("s", {"replicas": 3}),
        headers=APPLY,
    )
    assert reapplied.status_code == 200, reapplied.text  # the model is still there (owned by the first writer)
    assert kube.get(SVC, NS, "s")["spec"] == {"model": {"name": "qwen"}, "replicas": 3}


async def test_required_fields_are_checked_in_nested_objects_and_array_items(kube, api):
    """In every item of a list, by a path without index, each missing field once."""
    await _namespace(api)
    services = kube.path(SVC, NS)
    adapters = [{"name": "one"}, {"name": "two", "sourceUri": "hf://org/two"}, {"name": "three"}]
    spec = {"model": {"name": "qwen"}, "adapters": adapters, "env": [{"value": "1"}]}
    refused = await api.post(services, json=service("s", spec))
    assert_invalid_unordered(refused, "AIMService", "s", required("spec.adapters.sourceUri", "spec.env.name"))

    spec = {"model": {"name": "qwen"}, "adapters": [{"name": "one", "sourceUri": "hf://org/one"}]}
    assert (await api.post(services, json=service("s", spec))).status_code == 201
    applied = await api.patch(
        f"{services}/s",
        params={"fieldManager": "t", "force": "true"},
        json=service("s", {"adapters": [{"name": "two"}]}),
        headers=APPLY,
    )
    assert_invalid(applied, "AIMService", "s", required("spec.adapters.sourceUri"))


async def test_a_status_write_checks_the_status_and_only_it(kube, api):
    """Conditions and the values of a map (a cache's `status.artifacts`) have required fields; a status write
    ignores the spec it carries, and a main-resource write the status."""
    await _namespace(api)
    services = kube.path(SVC, NS)
    made = await api.post(services, json=service("s", {"model": {"name": "qwen"}}))
    assert made.status_code == 201, made.text

    bare = await api.patch(f"{services}/s/status", json={"status": {"conditions": [{"type": "Ready"}]}}, headers=MERGE)
    fields = ("lastTransitionTime", "message", "reason", "status")  # the order of the schema's `required`
    assert_invalid(bare, "AIMService", "s", required(*(f"status.conditions.{f}" for f in fields)))

    # the spec of a status write is not the status subresource's: ignored, whatever it lacks
    ok = await api.patch(
        f"{services}/s/status", json={"spec": {"model": None}, "status": {"conditions": [CONDITION]}}, headers=MERGE
    )
    assert ok.status_code == 200, ok.text
    stored = kube.get(SVC, NS, "s")
    assert stored["spec"]["model"] == {"name": "qwen"} and stored["status"]["conditions"] == [CONDITION]
    # ... and the status of a main-resource write is the stored one
    created = await api.post(
        services, json={**service("t", {"model": {"name": "qwen"}}), "status": {"conditions": [{}]}}
    )
    assert created.status_code == 201, created.text

    cache = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "AIMTemplateCache",
        "metadata": {"name": "c"},
        "spec": {"templateName": "t", "templateScope": "Namespace"},
    }
    assert (await api.post(kube.path(TC, NS), json=cache)).status_code == 201
    artifacts = await api.patch(
        kube.path(TC, NS, "c", "status"), json={"status": {"artifacts": {"a": {"name": "x"}}}}, headers=MERGE
    )
    assert_invalid(
        artifacts, "AIMTemplateCache", "c", required(*(f"status.artifacts.a.{f}" for f in ("model", "status", "uid")))
    )
    no_scope = await api.post(
        kube.path(TC, NS), json={**cache, "metadata": {"name": "d"}, "spec": {"templateName": "t"}}
    )
    assert_invalid(no_scope, "AIMTemplateCache", "d", required("spec.templateScope"))


async def test_metadata_and_schema_problems_come_in_one_answer(kube, api):
    """A malformed name, a malformed label value and a missing required field: one 422 naming all three."""
    await _namespace(api)
    body = service("Bad_Name", {})
    body["metadata"]["labels"] = {"team": "a b"}
    refused = await api.post(kube.path(SVC, NS), json=body)
    name_rule = (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    label_rule = (
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )
    causes = [
        {"reason": "FieldValueInvalid", "message": f'Invalid value: "Bad_Name": {name_rule}', "field": "metadata.name"},
        {"reason": "FieldValueInvalid", "message": f'Invalid value: "a b": {label_rule}', "field": "metadata.labels"},
        *required("spec.model"),
    ]
    assert_invalid(refused, "AIMService", "Bad_Name", causes)


def status_body(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message}
    body.update(reason=reason, **({"details": details} if details is not None else {}), code=code)
    return body


async def test_not_found_conflict_and_already_exists_answer_as_the_api_server(kube, api):
    await _namespace(api)
    services = kube.path(SVC, NS)
    gone = status_body(
        404,
        "NotFound",
        f'aimservices.{GROUP} "nope" not found',
        {"name": "nope", "group": GROUP, "kind": "aimservices"},
    )
    assert (await api.get(f"{services}/nope")).json() == gone
    assert (await api.delete(f"{services}/nope")).json() == gone
    for path in (f"{services}/nope", f"{services}/nope/status"):
        missing = await api.patch(path, json={"spec": {}}, headers=MERGE)
        assert (missing.status_code, missing.json()) == (404, gone)
    replaced = await api.put(
        f"{services}/nope", json={**service("nope"), "metadata": {"name": "nope", "resourceVersion": "1"}}
    )
    assert (replaced.status_code, replaced.json()) == (404, gone)

    made = (await api.post(services, json=service("s", {"model": {"name": "qwen"}}))).json()
    again = await api.post(services, json=service("s", {"model": {"name": "qwen"}}))
    assert (again.status_code, again.json()) == (
        409,
        status_body(
            409,
            "AlreadyExists",
            f'aimservices.{GROUP} "s" already exists',
            {"name": "s", "group": GROUP, "kind": "aimservices"},
        ),
    )
    stale = {**made, "metadata": {**made["metadata"], "resourceVersion": "1"}}
    conflict = status_body(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on aimservices.{GROUP} "s": the object has been modified; please apply '
        "your changes to the latest version and try again",
        {"name": "s", "group": GROUP, "kind": "aimservices"},
    )
    assert (await api.put(f"{services}/s", json=stale)).json() == conflict
    patched = await api.patch(
        f"{services}/s", json={"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 2}}, headers=MERGE
    )
    assert (patched.status_code, patched.json()) == (409, conflict)

    unversioned = await api.put(f"{services}/s", json={**made, "metadata": {"name": "s"}})
    cause = {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: 0x0: must be specified for an update",
        "field": "metadata.resourceVersion",
    }
    assert (unversioned.status_code, unversioned.json()) == (
        422,
        status_body(
            422,
            "Invalid",
            f'aimservices.{GROUP} "s" is invalid: metadata.resourceVersion: {cause["message"]}',
            {"name": "s", "group": GROUP, "kind": "aimservices", "causes": [cause]},
        ),
    )
    renamed = await api.put(f"{services}/s", json={**made, "metadata": {**made["metadata"], "name": "t"}})
    assert (renamed.status_code, renamed.json()) == (
        400,
        status_body(400, "BadRequest", "the name of the object (t) does not match the name on the URL (s)"),
    )
    unmanaged = await api.patch(f"{services}/s", json=service("s", {"model": {"name": "qwen"}}), headers=APPLY)
    cause = {
        "reason": "FieldValueRequired",
        "message": "Required value: is required for apply patch",
        "field": "fieldManager",
    }
    assert (unmanaged.status_code, unmanaged.json()) == (
        422,
        status_body(
            422,
            "Invalid",
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
            {"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [cause]},
        ),
    )


async def test_custom_resources_are_selected_by_name_and_namespace_only(kube, api):
    """kube-apiserver 1.24 knows no other field of a custom resource (CRD selectableFields came in 1.30)."""
    await _namespace(api)
    services = kube.path(SVC, NS)
    for name in ("a", "b"):
        assert (await api.post(services, json=service(name, {"model": {"name": "qwen"}}))).status_code == 201

    def names(response: httpx.Response) -> list[str]:
        assert response.status_code == 200, response.text
        return [item["metadata"]["name"] for item in response.json()["items"]]

    assert names(await api.get(services, params={"fieldSelector": "metadata.name=b"})) == ["b"]
    assert names(await api.get(services, params={"fieldSelector": "metadata.name!=b"})) == ["a"]
    assert names(await api.get(kube.path(SVC), params={"fieldSelector": f"metadata.namespace={NS}"})) == ["a", "b"]
    for selector in ("spec.replicas=1", "status.status=Ready"):
        refused = await api.get(services, params={"fieldSelector": selector})
        label = selector.split("=")[0]
        assert refused.json() == status_body(400, "BadRequest", f"field label not supported: {label}")
        watch = await api.get(services, params={"watch": "true", "fieldSelector": selector, "timeoutSeconds": "1"})
        assert watch.status_code == 400, watch.text
    unparsable = await api.get(services, params={"fieldSelector": "metadata.name"})
    assert unparsable.json() == status_body(
        400, "BadRequest", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
    )


async def test_a_paged_list_goes_on_with_its_continue_token(kube, api):
    await _namespace(api)
    services = kube.path(SVC, NS)
    for i in range(5):
        assert (await api.post(services, json=service(f"s{i}", {"model": {"name": "qwen"}}))).status_code == 201
    pages, token = [], None
    while True:
        params = {"limit": "2", **({"continue": token} if token else {})}
        page = (await api.get(services, params=params)).json()
        meta = page["metadata"]
        pages.append(([item["metadata"]["name"] for item in page["items"]], meta.get("remainingItemCount")))
        token = meta.get("continue")
        if not token:
            break
    assert pages == [(["s0", "s1"], 3), (["s2", "s3"], 1), (["s4"], None)]
    unreadable = await api.get(services, params={"limit": "2", "continue": "garbage"})
    assert unreadable.status_code == 400 and unreadable.json()["reason"] == "BadRequest"
    assert unreadable.json()["message"].startswith("invalid continue token")


async def test_a_watch_resumes_after_the_version_it_names(kube, api):
    """From a list's resourceVersion: only what changed since; without one: every object as ADDED first."""
    await _namespace(api)
    services = kube.path(SVC, NS)
    for name in ("a", "b"):
        assert (await api.post(services, json=service(name, {"model": {"name": "qwen"}}))).status_code == 201
    listed = (await api.get(services)).json()["metadata"]["resourceVersion"]
    changed = await api.patch(f"{services}/a", json={"spec": {"replicas": 2}}, headers=MERGE)
    latest = changed.json()["metadata"]["resourceVersion"]

    async def events(**params: str) -> list[tuple[str, str, str]]:
        response = await api.get(services, params={"watch": "true", "timeoutSeconds": "1", **params})
        assert response.status_code == 200, response.text
        found = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        return [(e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"]) for e in found]

    assert await events(resourceVersion=listed) == [("MODIFIED", "a", latest)]
    assert await events(resourceVersion=latest) == []
    b = next(item for item in (await api.get(services)).json()["items"] if item["metadata"]["name"] == "b")
    assert sorted(await events()) == [("ADDED", "a", latest), ("ADDED", "b", b["metadata"]["resourceVersion"])]
    assert sorted(await events(resourceVersion="0")) == sorted(await events())


def bad(field: str, value: str, message: str) -> dict[str, str]:
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {value}: {field} {message}", "field": field}


async def test_values_that_break_the_schema_are_refused_with_the_servers_messages(kube, api):
    """Types, bounds, lengths, patterns, item counts and enums, at any depth; nothing below a wrong type."""
    await _namespace(api)
    services = kube.path(SVC, NS)
    model = {"name": "qwen"}
    pattern = "^[A-Za-z0-9]([A-Za-z0-9._:/-]*[A-Za-z0-9])?$"
    many = [{"name": f"a{i}", "sourceUri": "hf://org/a"} for i in range(33)]
    cases = {
        "int": ({"replicas": "two"}, bad("spec.replicas", '"string"', 'in body must be of type integer: "string"')),
        "float": ({"replicas": 1.5}, bad("spec.replicas", '"number"', 'in body must be of type integer: "number"')),
        "object": (
            {"routing": {"enabled": "yes"}},
            bad("spec.routing.enabled", '"string"', 'in body must be of type boolean: "string"'),
        ),
        "array": ({"env": {"a": 1}}, bad("spec.env", '"object"', 'in body must be of type array: "object"')),
        "map": (
            {"nodeSelector": {"a": 1}},
            bad("spec.nodeSelector.a", '"integer"', 'in body must be of type string: "integer"'),
        ),
        "minimum": ({"minReplicas": 0}, bad("spec.minReplicas", "0", "in body should be greater than or equal to 1")),
        "items": ({"adapters": many}, bad("spec.adapters", "33", "in body should have at most 32 items")),
        "pattern": (
            {"adapters": [{"name": "has space", "sourceUri": "hf://org/a"}]},
            bad("spec.adapters.name", '"has space"', f"in body should match '{pattern}'"),
        ),
        "length": (
            {"adapters": [{"name": "a" * 129, "sourceUri": "hf://org/a"}]},
            bad("spec.adapters.name", f'"{"a" * 129}"', "in body should be at most 128 chars long"),
        ),
    }
    for name, (spec, cause) in cases.items():
        refused = await api.post(services, json=service(name, {"model": model, **spec}))
        assert_invalid(refused, "AIMService", name, [cause])
    both = await api.post(services, json=service("two", {"model": model, "minReplicas": 0, "replicas": "x"}))
    assert_invalid_unordered(
        both,
        "AIMService",
        "two",
        [cases["int"][1], bad("spec.minReplicas", "0", "in body should be greater than or equal to 1")],
    )

    cache = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "AIMTemplateCache",
        "metadata": {"name": "c"},
        "spec": {"templateName": "t", "templateScope": "Everywhere"},
    }
    unsupported = {
        "reason": "FieldValueNotSupported",
        "message": 'Unsupported value: "Everywhere": supported values: "Namespace", "Cluster", "Unknown"',
        "field": "spec.templateScope",
    }
    assert_invalid(await api.post(kube.path(TC, NS), json=cache), "AIMTemplateCache", "c", [unsupported])
    assert kube.list(SVC, NS) == [] and kube.list(TC, NS) == []
