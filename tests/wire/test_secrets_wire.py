"""Secrets never reach status, Events or logs (issue 10).

`aim-engine run -v` (DEBUG logs, JSON format, every plugin hook call traced) runs as a
process against the API emulator and works through every flow that handles credentials:

* models whose images need a pull secret, on a registry with htpasswd Basic auth and on
  one with the bearer-token flow (a local token service), by tag and by digest; first
  with the right password, then the same user with a wrong one (refused, although the
  operator has just read those images: nothing granted to one pull secret serves another);
* cluster model sources listing a private registry with a pull secret, right and wrong;
* an artifact whose Jobs get ``HF_TOKEN`` from a Secret through the team's runtime config;
* and all along, its own bearer token for the API server (from the kubeconfig).

Then every object the emulator holds (status included; Events with message, reason and
note), every request body the operator sent and everything the process printed are
searched for each password, ``user:password`` (the Basic header, docker's ``auth``),
the HF token and every bearer token the token service issued, as is and in base64
(tests/testing/test_leaks.py shows the scanner finds them when they are there).
The downloader's side is tests/downloader/test_secrets.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
import yaml

from aim_core.plugin.providers import RegistryCredentials
from aim_testing.leaks import SecretScanner
from aim_testing.registry import Registry, RegistryServer, TokenServer, find_registry_binary
from tests.wire.conftest import eventually

NS, SYSTEM = "ml-team", "aim-system"
MODELS = "aim.eai.amd.com/v1alpha1/aimmodels"
CLUSTER_MODELS = "aim.eai.amd.com/v1alpha1/aimclustermodels"
SOURCES = "aim.eai.amd.com/v1alpha1/aimclustermodelsources"
ARTIFACTS = "aim.eai.amd.com/v1alpha1/aimartifacts"
RUNTIME_CONFIGS = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"
LABELS = {"com.amd.aim.model.canonicalName": "org/private", "com.amd.aim.title": "Private"}

USER = "ci-robot"
PASSWORD = f"pw-{secrets.token_urlsafe(12)}"
WRONG = f"wrong-{secrets.token_urlsafe(12)}"
HF_TOKEN = f"hf_{secrets.token_urlsafe(16)}"
API_TOKEN = f"sa-{secrets.token_urlsafe(24)}"  # the operator's own token for the API server

pytestmark = pytest.mark.skipif(find_registry_binary() is None, reason="docker-registry is not installed")


@pytest.fixture(scope="module")
def token_service() -> Iterator[TokenServer]:
    server = TokenServer({USER: PASSWORD}).start()
    yield server
    server.stop()


def _registry(server: RegistryServer) -> Iterator[Registry]:
    registry = Registry(
        server.url,
        storage=server.storage,
        admin=(USER, PASSWORD),
        credentials=RegistryCredentials(username=USER, password=PASSWORD),
    )
    try:
        yield registry
    finally:
        registry.close()
        server.stop()


@pytest.fixture(scope="module")
def basic_registry() -> Iterator[Registry]:
    yield from _registry(RegistryServer(auth="htpasswd", users={USER: PASSWORD}).start())


@pytest.fixture(scope="module")
def token_registry(token_service: TokenServer) -> Iterator[Registry]:
    yield from _registry(RegistryServer(auth="token", token_server=token_service).start())


def condition(obj, type_):
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


async def create(api, kube, resource, body):
    response = await api.post(kube.path(resource, body["metadata"].get("namespace")), json=body)
    assert response.status_code in (200, 201), response.text


def model(name, image, secret):
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMModel",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"image": image, "imagePullSecrets": [{"name": secret}]},
    }


def source(name, images, secret):
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterModelSource",
        "metadata": {"name": name},
        "spec": {"images": images, "imagePullSecrets": [{"name": secret}]},
    }


@attrs.define
class Images:
    on_basic: str = ""
    on_token: str = ""
    on_token_by_digest: str = ""


async def seed(kube, api, basic: Registry, token: Registry) -> Images:
    for ns in (NS, SYSTEM):
        kube.put_object(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}, "status": {"phase": "Active"}}
        )
    wrong = RegistryCredentials(username=USER, password=WRONG)
    for ns in (NS, SYSTEM):
        await create(api, kube, "v1/secrets", basic.pull_secret("basic-cred", ns))
        await create(api, kube, "v1/secrets", basic.pull_secret("basic-wrong", ns, wrong))
        await create(api, kube, "v1/secrets", token.pull_secret("token-cred", ns))
        await create(api, kube, "v1/secrets", token.pull_secret("token-wrong", ns, wrong))
    await create(
        api,
        kube,
        "v1/secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": "hf-token", "namespace": NS},
            "stringData": {"token": HF_TOKEN},
        },
    )
    pushed = token.push_image("private/model", "1.0.0", labels=LABELS)
    images = Images(
        on_basic=basic.push_image("team/private", "1.0.0", labels=LABELS).reference,
        on_token=pushed.reference,
        on_token_by_digest=f"{token.host}/private/model@{pushed.digest}",
    )
    basic.tag("team/private", "1.0.0", ["1.1.0"])
    return images


async def first_the_right_credentials(kube, api, images: Images, basic: Registry) -> None:
    await create(api, kube, MODELS, model("basic-ok", images.on_basic, "basic-cred"))
    await create(api, kube, MODELS, model("token-ok", images.on_token, "token-cred"))
    await create(api, kube, MODELS, model("digest-ok", images.on_token_by_digest, "token-cred"))
    await create(api, kube, SOURCES, source("private", [f"{basic.host}/team/private"], "basic-cred"))
    await create(
        api,
        kube,
        RUNTIME_CONFIGS,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "default", "namespace": NS},
            "spec": {
                "env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}}]
            },
        },
    )
    await create(
        api,
        kube,
        ARTIFACTS,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMArtifact",
            "metadata": {"name": "gated", "namespace": NS},
            "spec": {"sourceUri": "hf://org/gated"},
        },
    )

    def metadata_read(name):
        return kube.get(MODELS, NS, name)["status"]["imageMetadata"]["model"]["title"] == "Private"

    def cluster_models_read():
        assert kube.get(SOURCES, None, "private")["status"]["status"] == "Ready"
        found = kube.list(CLUSTER_MODELS, label_selector="aim.eai.amd.com/model-source=private")
        assert len(found) == 2, found
        assert all(m["status"]["imageMetadata"]["model"]["title"] == "Private" for m in found), found
        return True

    def check_size_job_has_the_token():
        jobs = kube.list("batch/v1/jobs", NS)
        env = [e for j in jobs for c in j["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []]
        assert any(e["name"] == "HF_TOKEN" and "secretKeyRef" in e.get("valueFrom", {}) for e in env), env
        return True

    for name in ("basic-ok", "token-ok", "digest-ok"):
        await eventually(lambda name=name: metadata_read(name), timeout=30)
    await eventually(cluster_models_read, timeout=30)
    await eventually(check_size_job_has_the_token, timeout=30)


async def then_the_wrong_ones(kube, api, images: Images, token: Registry) -> None:
    """Same user, wrong password, on images the operator has just read: refused, nothing served from a cache."""
    await create(api, kube, MODELS, model("basic-wrong", images.on_basic, "basic-wrong"))
    await create(api, kube, MODELS, model("token-wrong", images.on_token, "token-wrong"))
    await create(api, kube, MODELS, model("digest-wrong", images.on_token_by_digest, "token-wrong"))
    await create(api, kube, SOURCES, source("private-wrong", [f"{token.host}/private/model"], "token-wrong"))

    def refused(name):
        obj = kube.get(MODELS, NS, name)
        found = condition(obj, "AuthValid")
        assert found and found["status"] == "False", obj.get("status")
        assert not (obj["status"].get("imageMetadata") or {}).get("model"), obj["status"]
        return True

    for name in ("basic-wrong", "token-wrong", "digest-wrong"):
        await eventually(lambda name=name: refused(name), timeout=30)
    await eventually(lambda: kube.get(SOURCES, None, "private-wrong")["status"]["status"] == "Failed", timeout=30)


def kubeconfig_with_token(kube, path: Path) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "test",
                "clusters": [{"name": "test", "cluster": {"server": kube.url}}],
                "users": [{"name": "test", "user": {"token": API_TOKEN}}],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
            }
        )
    )
    return path


async def test_no_secret_reaches_status_events_or_logs(
    kube, api, tmp_path, basic_registry, token_registry, token_service
):
    images = await seed(kube, api, basic_registry, token_registry)
    log = tmp_path / "operator.log"
    kubeconfig = kubeconfig_with_token(kube, tmp_path / "kubeconfig")
    env = {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "AIM_SYSTEM_NAMESPACE": SYSTEM,
        "AIM_ENGINE_TRACE_PLUGINS": "1",
        "AIM_ENGINE_REGISTRY_BACKOFF": "0.05",
        "AIM_ENGINE_REGISTRY_TIMEOUT": "5",
    }
    with open(log, "wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "aim_core.cli",
            "run",
            "-A",
            "-v",
            "--log-format",
            "json",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            env=env,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            await first_the_right_credentials(kube, api, images, basic_registry)
            await then_the_wrong_ones(kube, api, images, token_registry)
        finally:
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 30)
    output = log.read_text()
    assert code == 0, output[-3000:]

    scanner = SecretScanner().add_login("registry login", USER, PASSWORD).add_login("wrong login", USER, WRONG)
    scanner.add("HF token", HF_TOKEN).add("API server token", API_TOKEN).add_many("bearer token", token_service.issued)
    leaks = scanner.scan_emulator(kube.emulator) + scanner.scan_text("operator output", output)
    assert leaks == [], "\n".join(map(str, leaks))

    # the scan had something to look at: every flow ran, at DEBUG, with tokens issued and refused
    assert token_service.issued, "the token flow did not run"
    assert any(r.headers.get("Authorization") == f"Bearer {API_TOKEN}" for r in kube.emulator), "API token unused"
    assert any(not r.granted for r in token_service.requests), "the wrong password never reached the token service"
    records = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert {"debug", "info"} <= {r.get("severity") for r in records}, output[-2000:]
    assert any(r["message"].startswith("hook aim_registry_client") for r in records), "plugin hook calls not traced"
    assert kube.list("v1/events", NS), "no Events were posted"
    assert len(scanner.checked) > 50
