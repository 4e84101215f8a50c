"""The downloader never shows an HF token or S3 key: not in its output, its status patches or the objects.

``aim-engine artifact download`` and ``check-size`` run as processes (as the Jobs run
them) with ``HF_TOKEN`` against a fake Hub holding a gated repository, and with S3
keys against moto's server, each with the right secret and with a wrong one (so the
error paths print and patch too). Everything they printed, every request body they
sent to the API emulator and every object there is then searched for the secrets as
is and in base64 (tests/testing/test_leaks.py shows the scanner finds planted ones).
The operator's side is tests/wire/test_secrets_wire.py.
"""

from __future__ import annotations

import json
import os
import secrets

from aim_core.downloader.sources import Failure
from aim_testing.leaks import SecretScanner
from tests.downloader.conftest import NAMESPACE, base_env, run

HF_TOKEN = f"hf_{secrets.token_urlsafe(18)}"
WRONG_HF_TOKEN = f"hf_{secrets.token_urlsafe(18)}"
WRONG_S3_SECRET = secrets.token_urlsafe(30)
FILES = {"config.json": b'{"model_type": "llama"}', "model.safetensors": os.urandom(300_000)}


def scanner() -> SecretScanner:
    return (
        SecretScanner()
        .add("HF token", HF_TOKEN)
        .add("wrong HF token", WRONG_HF_TOKEN)
        .add("wrong S3 secret key", WRONG_S3_SECRET)
    )


def artifact_env(tmp_path, cluster, name: str, **extra: str) -> dict[str, str]:
    cluster.artifact(name, extra.pop("uri"))
    folder = tmp_path / name
    folder.mkdir()
    return base_env(folder, ARTIFACT_NAME=name, ARTIFACT_NAMESPACE=NAMESPACE, **cluster.env(), **extra)


async def test_an_hf_token_is_never_shown(tmp_path, hub, cluster):
    hub.add_repo("org/gated", FILES, token=HF_TOKEN)
    uri = "hf://org/gated"
    outputs = {}
    for name, token in (("right", HF_TOKEN), ("wrong", WRONG_HF_TOKEN)):
        env = artifact_env(tmp_path, cluster, name, uri=uri, HF_ENDPOINT=hub.url, HF_TOKEN=token)
        outputs[f"download with the {name} token"] = await run(["download", uri], env)
        outputs[f"check-size with the {name} token"] = await run(["check-size", uri], env)

    assert outputs["download with the right token"].code == 0, outputs["download with the right token"].stderr
    assert outputs["check-size with the right token"].code == 0
    assert outputs["download with the wrong token"].code == Failure.AUTH.value
    assert outputs["check-size with the wrong token"].code == Failure.AUTH.value
    assert cluster.status("wrong")["download"]["message"].startswith("Failed")
    assert any(r.authorized for r in hub.requests) and any(not r.authorized for r in hub.requests)

    leaks = scanner().scan_emulator(cluster.kube.emulator)
    for where, result in outputs.items():
        leaks += scanner().scan_text(where, result.stdout + result.stderr)
    assert leaks == [], "\n".join(map(str, leaks))


async def test_s3_keys_are_never_shown(tmp_path, s3, s3_server, cluster, monkeypatch):
    from moto import settings

    s3.create_bucket(Bucket="private-models")
    for name, body in FILES.items():
        s3.put_object(Bucket="private-models", Key=f"llama/{name}", Body=body)
    iam = __import__("boto3").client(
        "iam",
        endpoint_url=s3_server,
        region_name="us-east-1",
        aws_access_key_id="AKIATESTING",
        aws_secret_access_key="testing-secret",
    )
    iam.create_user(UserName="downloader")
    iam.put_user_policy(
        UserName="downloader",
        PolicyName="read",
        PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        ),
    )
    key = iam.create_access_key(UserName="downloader")["AccessKey"]
    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # moto checks signatures from now on
    uri = "s3://private-models/llama"
    keys = {"right": key["SecretAccessKey"], "wrong": WRONG_S3_SECRET}
    outputs = {}
    for name, secret in keys.items():
        env = artifact_env(
            tmp_path,
            cluster,
            f"s3-{name}",
            uri=uri,
            AWS_ENDPOINT_URL=s3_server,
            AWS_ACCESS_KEY_ID=key["AccessKeyId"],
            AWS_SECRET_ACCESS_KEY=secret,
            AWS_EC2_METADATA_DISABLED="true",
        )
        outputs[f"download with the {name} key"] = await run(["download", uri], env)
        outputs[f"check-size with the {name} key"] = await run(["check-size", uri], env)

    assert outputs["download with the right key"].code == 0, outputs["download with the right key"].stderr
    assert outputs["download with the wrong key"].code == Failure.AUTH.value, outputs["download with the wrong key"]
    assert outputs["check-size with the wrong key"].code == Failure.AUTH.value

    found = scanner().add("S3 secret key (issued)", keys["right"])
    leaks = found.scan_emulator(cluster.kube.emulator)
    for where, result in outputs.items():
        leaks += found.scan_text(where, result.stdout + result.stderr)
    assert leaks == [], "\n".join(map(str, leaks))
