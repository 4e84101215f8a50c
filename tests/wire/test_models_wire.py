"""AIMModel / AIMClusterModel end to end: the real operator against the API emulator.

The registry here is a throwaway plugin registered through the
``aim_registry_client`` hook (the way a third-party registry plugin is picked
for its host); it answers from a dict and counts calls, so the tests can say
exactly when the operator asked a registry and with which credentials.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import time

import pytest

from aim_core import hookimpl
from aim_core.operator.settings import Settings
from aim_core.plugin.manager import get_plugin_manager
from aim_core.registry import ImageInfo, RegistryError
from tests.wire import discovery
from tests.wire.conftest import Operator, eventually

MODELS = "aim.eai.amd.com/v1alpha1/aimmodels"
CLUSTER_MODELS = "aim.eai.amd.com/v1alpha1/aimclustermodels"
TEMPLATES = "aim.eai.amd.com/v1alpha1/aimservicetemplates"
CLUSTER_TEMPLATES = "aim.eai.amd.com/v1alpha1/aimclusterservicetemplates"
RUNTIME_CONFIGS = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"
SECRETS = "v1/secrets"
NS = "ml-team"
HOST = "registry.test"
IMAGE = f"{HOST}/org/aim-dummy:1.0"
LABELS = {
    "com.amd.aim.model.canonicalName": "org/dummy",
    "com.amd.aim.model.recommendedDeployments": json.dumps(
        [
            {"gpuModel": "MI300X", "gpuCount": 1, "metric": "latency", "precision": "fp8", "profileId": "p-lat"},
            {"gpuModel": "MI300X", "gpuCount": 8, "metric": "throughput", "precision": "fp16"},
        ]
    ),
    "org.opencontainers.image.vendor": "AMD",
}


class FakeRegistry:
    """A registry client for ``registry.test`` answering from ``images``; records every call."""

    name = "fake"

    def __init__(self) -> None:
        self.images: dict[str, dict[str, str]] = {"org/aim-dummy:1.0": LABELS, "org/plain:1": {}}
        self.private: dict[str, tuple[str, str]] = {}  # repo:tag -> (user, password) it needs
        self.calls: list[tuple[str, str | None]] = []

    @hookimpl
    def aim_registry_client(self, registry: str):
        return self if registry == HOST else None

    async def image_info(self, image, credentials):
        key = f"{image.repository}:{image.tag}"
        self.calls.append((key, credentials.username if credentials else None))
        needed = self.private.get(key)
        if needed and (credentials is None or (credentials.username, credentials.password) != needed):
            raise RegistryError("auth", f"registry {HOST}: 401 for {image}", registry=HOST, image=str(image))
        if key not in self.images:
            raise RegistryError("not_found", f"registry {HOST}: {image} not found", registry=HOST, image=str(image))
        digest = "sha256:" + key.encode().hex().ljust(64, "0")[:64]
        return ImageInfo(digest=digest, labels=self.images[key])

    async def list_tags(self, repository, credentials):
        return []

    async def list_repositories(self, pattern, credentials):
        return []


@pytest.fixture()
def registry() -> FakeRegistry:
    return FakeRegistry()


def plugins_with(registry: FakeRegistry):
    pm = get_plugin_manager()
    pm.register(registry, name="test-registry")
    return pm


@pytest.fixture()
def operator_plugins(registry):
    return plugins_with(registry)


@pytest.fixture()
def namespace(kube):
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})


def condition(obj, type_):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            return c
    return None


async def create(api, kube, resource, body):
    ns = body["metadata"].get("namespace")
    response = await api.post(kube.path(resource, ns), json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()


def model_body(name="dummy", image=IMAGE, **spec):
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMModel",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"image": image, **spec},
    }


def pull_secret(name, user, password, host=HOST, type_="kubernetes.io/dockerconfigjson"):
    config = {"auths": {host: {"username": user, "password": password}}}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": type_,
        "metadata": {"name": name, "namespace": NS},
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
    }


async def test_a_model_gets_its_metadata_and_templates_and_goes_ready_with_them(
    kube, api, namespace, registry, operator
):
    kube.put_object(discovery.gpu_node(count=8))  # the templates' MI300X x1 and x8 fit on it
    await create(api, kube, MODELS, model_body())

    def with_metadata():
        m = kube.get(MODELS, NS, "dummy")
        assert m["status"]["imageMetadata"]["model"]["canonicalName"] == "org/dummy"
        return m

    m = await eventually(with_metadata)
    assert m["status"]["resolvedImage"]["source"] == "Registry"
    assert m["status"]["resolvedImage"]["digest"].startswith("sha256:")
    assert m["status"]["imageMetadata"]["oci"] == {"vendor": "AMD"}

    def two_templates():
        found = kube.list(TEMPLATES, NS, label_selector="aim.eai.amd.com/model=dummy")
        assert len(found) == 2
        return found

    templates = await eventually(two_templates)
    for tpl in templates:
        assert tpl["metadata"]["labels"]["aim.eai.amd.com/origin"] == "auto-generated"
        owner = tpl["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("AIMModel", "dummy", True)
        assert tpl["spec"]["modelName"] == "dummy"
    lat = next(t for t in templates if t["spec"].get("metric") == "latency")
    assert lat["spec"]["profileId"] == "p-lat" and lat["spec"]["hardware"]["gpu"]["model"] == "MI300X"
    assert lat["metadata"]["name"].startswith("registry-test-org-aim-dummy-1-0-1x-mi300x-lat-fp8-")

    # the model follows its templates' status (F24) through the template watch (F26)
    await eventually(
        lambda: (
            condition(kube.get(MODELS, NS, "dummy"), "ServiceTemplatesReady")["reason"]
            in ("CreatingTemplates", "TemplatesProgressing")
        )
    )
    for tpl in templates:  # the template controllers run discovery; play its Jobs' pods
        name = tpl["metadata"]["name"]
        (job,) = await eventually(lambda: discovery.jobs_of(kube, name, NS))
        discovery.finish(kube, job, log=discovery.output(count=tpl["spec"]["hardware"]["gpu"]["requests"]))
    ready = await eventually(lambda: (m := kube.get(MODELS, NS, "dummy"))["status"]["status"] == "Ready" and m)
    assert condition(ready, "ServiceTemplatesReady")["reason"] == "AllTemplatesReady"
    assert condition(ready, "ImageMetadataReady")["status"] == "True"
    assert len(registry.calls) == 1


async def test_a_missing_pull_secret_is_reported_before_any_registry_call_and_recovers(
    kube, api, namespace, registry, operator
):
    registry.private["org/aim-dummy:1.0"] = ("robot", "s3cret")
    await create(api, kube, MODELS, model_body(imagePullSecrets=[{"name": "regcred"}]))

    def failed():
        m = kube.get(MODELS, NS, "dummy")
        assert m["status"]["status"] == "Failed"
        return m

    m = await eventually(failed)
    assert condition(m, "ConfigValid")["reason"] == "ReferenceNotFound"
    assert condition(m, "ImageMetadataReady")["reason"] == "SecretNotFound"
    assert "regcred" in condition(m, "Ready")["message"]
    assert registry.calls == []

    # a Secret of the wrong type is named as such
    await create(api, kube, SECRETS, {**pull_secret("regcred", "robot", "s3cret"), "type": "Opaque"})
    await eventually(
        lambda: condition(kube.get(MODELS, NS, "dummy"), "ImageMetadataReady")["reason"] == "InvalidPullSecret"
    )
    assert registry.calls == []
    await api.delete(kube.path(SECRETS, NS, "regcred"))

    # the right Secret appears: the model recovers by itself, with its credentials
    await create(api, kube, SECRETS, pull_secret("regcred", "robot", "s3cret"))
    m = await eventually(lambda: (m := kube.get(MODELS, NS, "dummy"))["status"].get("imageMetadata") and m)
    assert registry.calls == [("org/aim-dummy:1.0", "robot")]
    assert condition(m, "ConfigValid")["status"] == "True"
    secret_text = json.dumps(m) + json.dumps([e for e in kube.events_for("dummy", NS)])
    assert "s3cret" not in secret_text


async def test_wrong_credentials_fail_the_model_with_auth_and_new_ones_fix_it(kube, api, namespace, registry, operator):
    registry.private["org/aim-dummy:1.0"] = ("robot", "s3cret")
    await create(api, kube, SECRETS, pull_secret("regcred", "robot", "wrong"))
    await create(api, kube, MODELS, model_body(imagePullSecrets=[{"name": "regcred"}]))
    m = await eventually(lambda: (m := kube.get(MODELS, NS, "dummy"))["status"]["status"] == "Failed" and m)
    assert condition(m, "AuthValid")["status"] == "False"
    assert condition(m, "ImageMetadataReady")["reason"] == "Unauthorized"
    assert "wrong" not in json.dumps(m["status"])
    calls = len(registry.calls)
    await operator.settle()
    assert len(registry.calls) == calls == 1  # no hot loop on a permanent failure

    secret = pull_secret("regcred", "robot", "s3cret")
    await api.put(kube.path(SECRETS, NS, "regcred"), json=secret)
    await eventually(lambda: kube.get(MODELS, NS, "dummy")["status"].get("imageMetadata"))
    assert registry.calls[-1] == ("org/aim-dummy:1.0", "robot") and len(registry.calls) == 2


async def test_a_missing_runtime_config_fails_the_model_until_it_appears(kube, api, namespace, registry, operator):
    await create(api, kube, MODELS, model_body(runtimeConfigName="team"))
    m = await eventually(lambda: (m := kube.get(MODELS, NS, "dummy"))["status"]["status"] == "Failed" and m)
    assert condition(m, "RuntimeConfigReady")["reason"] == "ConfigNotFound"
    assert condition(m, "ConfigValid")["reason"] == "ReferenceNotFound"
    assert registry.calls == []
    await create(
        api,
        kube,
        RUNTIME_CONFIGS,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "team", "namespace": NS},
            "spec": {},
        },
    )
    m = await eventually(lambda: (m := kube.get(MODELS, NS, "dummy"))["status"].get("imageMetadata") and m)
    assert condition(m, "RuntimeConfigReady")["reason"] == "ConfigFound"


async def test_spec_metadata_needs_no_registry_and_an_unlabelled_image_is_ready(
    kube, api, namespace, registry, operator
):
    given = {"model": {"canonicalName": "org/air-gapped"}}
    await create(api, kube, MODELS, model_body("air", image=f"{HOST}/org/missing:1", imageMetadata=given))
    await create(api, kube, MODELS, model_body("plain", image=f"{HOST}/org/plain:1"))
    air = await eventually(lambda: (m := kube.get(MODELS, NS, "air"))["status"].get("status") == "Ready" and m)
    assert air["status"]["imageMetadata"] == given
    plain = await eventually(lambda: (m := kube.get(MODELS, NS, "plain"))["status"].get("status") == "Ready" and m)
    assert condition(plain, "ServiceTemplatesReady")["reason"] == "NoTemplatesExpected"
    assert registry.calls == [("org/plain:1", None)]


async def test_a_missing_image_degrades_the_model_and_hostile_input_fails_it(kube, api, namespace, registry, operator):
    await create(api, kube, MODELS, model_body("gone", image=f"{HOST}/org/nope:1"))
    gone = await eventually(lambda: (m := kube.get(MODELS, NS, "gone"))["status"]["status"] == "Degraded" and m)
    assert condition(gone, "ImageMetadataReady")["reason"] == "ImageNotFound"  # Q8: Degraded, as upstream
    await operator.settle()
    mark = kube.mark()
    operator.requeue_all()  # whatever re-triggers it meanwhile: no registry call, no write
    await operator.settle()
    assert kube.writes(since=mark, agent="aim-engine") == 0, kube.calls[mark:]

    await create(api, kube, MODELS, model_body("upper", image=f"{HOST}/Org/Upper:1"))
    upper = await eventually(lambda: (m := kube.get(MODELS, NS, "upper"))["status"]["status"] == "Failed" and m)
    assert condition(upper, "ImageMetadataReady")["reason"] == "InvalidImageReference"
    assert condition(upper, "ConfigValid")["reason"] == "InvalidSpec"

    traversal = model_body(
        "traversal",
        modelSources=[{"modelId": "org/..", "sourceUri": "hf://org/x"}],
        custom={"hardware": {"gpu": {"requests": 1}}},
    )
    await create(api, kube, MODELS, traversal)
    bad = await eventually(lambda: (m := kube.get(MODELS, NS, "traversal"))["status"]["status"] == "Failed" and m)
    assert "'..'" in condition(bad, "Ready")["message"]
    await operator.settle()
    assert kube.list(TEMPLATES, NS) == []
    assert [c[0] for c in registry.calls] == ["org/nope:1"]


async def test_a_restarted_operator_does_not_fetch_what_status_holds(kube, api, namespace, registry):
    settings = Settings(operator_namespace="aim-system", workers=2)
    await create(api, kube, MODELS, model_body())
    for round_ in range(2):
        op = Operator()
        op.start(settings, kube.url, plugins_with(registry))
        deadline = time.monotonic() + 10
        while not (op.ready.is_set() and op.runtime is not None and op.runtime.ready.is_set()):
            assert op.error is None and time.monotonic() < deadline
            await asyncio.sleep(0.02)
        await eventually(lambda: len(kube.list(TEMPLATES, NS)) == 2)
        await op.settle()
        op.stop.set()
        while op.thread.is_alive():
            await asyncio.sleep(0.05)
        assert op.error is None
        assert len(registry.calls) == 1, f"round {round_}"


async def test_cluster_model_uses_secrets_of_the_operator_namespace(kube, api, registry, operator):
    kube.put_object(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "aim-system"}, "status": {"phase": "Active"}}
    )
    registry.private["org/aim-dummy:1.0"] = ("robot", "s3cret")
    secret = copy.deepcopy(pull_secret("regcred", "robot", "s3cret"))
    secret["metadata"]["namespace"] = "aim-system"
    await create(api, kube, SECRETS, secret)
    body = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterModel",
        "metadata": {"name": "shared"},
        "spec": {"image": IMAGE, "imagePullSecrets": [{"name": "regcred"}]},
    }
    await create(api, kube, CLUSTER_MODELS, body)
    await eventually(lambda: len(kube.list(CLUSTER_TEMPLATES, label_selector="aim.eai.amd.com/model=shared")) == 2)
    assert registry.calls == [("org/aim-dummy:1.0", "robot")]


async def test_a_service_with_an_inline_custom_model_gets_a_validated_custom_model_and_template(
    kube, api, namespace, registry, operator
):
    name = "chat-" + "x" * 60  # longer than a label value may be
    source = {"modelId": "inline/test-model", "sourceUri": "hf://sshleifer/tiny-gpt2"}
    service = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "model": {
                "custom": {
                    "baseImage": f"{HOST}/org/plain:1",
                    "modelSources": [source],
                    "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
                }
            }
        },
    }
    await create(api, kube, "aim.eai.amd.com/v1alpha1/aimservices", service)

    def custom_model():
        found = kube.list(MODELS, NS, label_selector="aim.eai.amd.com/custom-model=true")
        assert len(found) == 1
        return found[0]

    m = await eventually(custom_model)
    assert m["metadata"]["name"].startswith("inline-test-model-")
    label = m["metadata"]["labels"]["aim.eai.amd.com/service"]
    assert len(label) <= 63 and label.startswith("chat-xxx")
    assert "ownerReferences" not in m["metadata"]  # it outlives the service (F29)

    def custom_template():
        found = kube.list(TEMPLATES, NS, label_selector=f"aim.eai.amd.com/model={m['metadata']['name']}")
        assert len(found) == 1
        return found[0]

    tpl = await eventually(custom_template)
    assert tpl["metadata"]["name"] == f"{m['metadata']['name']}-custom-" + tpl["metadata"]["name"][-8:]
    assert tpl["spec"]["modelSources"][0]["modelId"] == "inline/test-model"
    assert tpl["spec"]["hardware"]["gpu"]["model"] == "MI300X" and tpl["spec"]["type"] == "unoptimized"
    m = await eventually(lambda: (x := kube.get(MODELS, NS, m["metadata"]["name"])).get("status") and x)
    assert m["status"]["sourceType"] == "Custom"
    assert condition(m, "ImageMetadataReady")["status"] == "True"  # the base image was checked (F27)
    assert registry.calls == [("org/plain:1", None)]
    # the service follows its model through the label fan-out, whatever state the template reaches
    svc = await eventually(
        lambda: (
            (s := kube.get("aim.eai.amd.com/v1alpha1/aimservices", NS, name))
            and condition(s, "ModelReady")["reason"] != "CreatingModel"
            and s
        )
    )
    assert m["metadata"]["name"] in condition(svc, "ModelReady")["message"]


async def test_quantities_are_written_in_the_canonical_form_kubernetes_prints(kube, api, namespace, registry, operator):
    # upstream's aimmodel/custom-models/cpu-only: `cpu: {requests: 1, limits: 2}` reads "2" (Go's canonical
    # resource.Quantity) in the template's spec and status.resolvedHardware, never "2000m" (issue 18)
    body = model_body(
        "cpu-only",
        image=f"{HOST}/org/plain:1",
        modelSources=[{"modelId": "org/tiny", "sourceUri": "hf://org/tiny", "size": "1024Mi"}],
        custom={"hardware": {"cpu": {"requests": 1, "limits": 2}}},
    )
    await create(api, kube, MODELS, body)

    def resolved():
        found = kube.list(TEMPLATES, NS, label_selector="aim.eai.amd.com/model=cpu-only")
        assert len(found) == 1, found
        assert found[0]["status"]["resolvedHardware"]["cpu"]
        return found[0]

    tpl = await eventually(resolved, timeout=30)
    assert tpl["spec"]["hardware"]["cpu"] == {"requests": "1", "limits": "2"}
    assert tpl["status"]["resolvedHardware"]["cpu"] == {"requests": "1", "limits": "2"}
    assert tpl["spec"]["modelSources"][0]["size"] == "1Gi"
