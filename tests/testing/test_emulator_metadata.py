"""The emulator refuses names and labels a real API server refuses (422 Invalid)."""

from __future__ import annotations

import httpx
import pytest

APPLY = {"Content-Type": "application/apply-patch+yaml"}
MERGE = {"Content-Type": "application/merge-patch+json"}
CONFIGMAPS = "/api/v1/namespaces/ns1/configmaps"


def configmap(name: str, labels: dict[str, str] | None = None) -> dict:
    meta: dict = {"name": name, "namespace": "ns1"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {}}


@pytest.mark.parametrize(
    "name,labels",
    [
        ("Upper", None),
        ("a" * 254, None),
        ("ok", {"aim.eai.amd.com/service": "s" * 64}),
        ("ok", {"aim.eai.amd.com/service": "-leading"}),
        ("ok", {"bad key!": "v"}),
        ("ok", {"Bad.Prefix/key": "v"}),
    ],
)
async def test_creating_an_object_with_a_bad_name_or_label_is_invalid(api: httpx.AsyncClient, name, labels):
    response = await api.post(CONFIGMAPS, json=configmap(name, labels))
    assert response.status_code == 422, response.text
    assert response.json()["reason"] == "Invalid"
    applied = await api.patch(
        f"{CONFIGMAPS}/{name[:50].lower() or 'x'}?fieldManager=t",
        json=configmap(name[:50].lower(), labels or {"x": "-"}),
        headers=APPLY,
    )
    assert applied.status_code == 422, applied.text


async def test_good_labels_pass_and_a_later_bad_label_is_refused(api: httpx.AsyncClient):
    good = {"aim.eai.amd.com/model": "m" * 63, "app.kubernetes.io/name": "x", "empty": ""}
    assert (await api.post(CONFIGMAPS, json=configmap("ok.name-1", good))).status_code == 201
    patch = {"metadata": {"labels": {"aim.eai.amd.com/model": "a b"}}}
    response = await api.patch(f"{CONFIGMAPS}/ok.name-1", json=patch, headers=MERGE)
    assert response.status_code == 422, response.text
