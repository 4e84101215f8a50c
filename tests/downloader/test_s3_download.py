"""``aim-engine artifact download s3://...`` as a process against moto's S3 server and the API emulator."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from aim_core.downloader.sources import Failure
from aim_testing.throttle import Proxy
from tests.downloader.conftest import NAMESPACE, Cluster, base_env, finish, run, start

KEY_ID, SECRET = "AKIATESTING", "testing-secret-that-must-not-leak"
OBJECTS = {
    "llama/config.json": b'{"model_type": "llama"}',
    "llama/model.safetensors": os.urandom(2_000_000),
    "llama/extra/notes.txt": b"in a subfolder: skipped by default",
    "llama2/other.bin": b"another model sharing the prefix text",
}


@pytest.fixture()
def bucket(s3, request) -> str:
    name = "b-" + request.node.name.replace("_", "-")[:50].lower().strip("-")
    s3.create_bucket(Bucket=name)
    for key, body in OBJECTS.items():
        s3.put_object(Bucket=name, Key=key, Body=body)
    return name


@pytest.fixture()
def proxy(s3_server) -> Iterator[Proxy]:
    url = urlsplit(s3_server)
    with Proxy(url.hostname or "127.0.0.1", url.port or 80) as p:
        yield p


def env_for(
    tmp_path: Path, endpoint: str, cluster: Cluster | None = None, name: str = "", **extra: str
) -> dict[str, str]:
    settings = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    if cluster is not None:
        settings.update(ARTIFACT_NAME=name, ARTIFACT_NAMESPACE=NAMESPACE, **cluster.env())
    return base_env(tmp_path, **{**settings, **extra})


async def test_download_fills_the_folder_and_reports_progress(tmp_path, s3_server, bucket, cluster):
    cluster.artifact("llama", f"s3://{bucket}/llama")

    result = await run(["download", f"s3://{bucket}/llama"], env_for(tmp_path, s3_server, cluster, "llama"))

    assert result.code == 0, result.stderr
    cache = tmp_path / "cache"
    assert (cache / "config.json").read_bytes() == OBJECTS["llama/config.json"]
    assert (cache / "model.safetensors").read_bytes() == OBJECTS["llama/model.safetensors"]
    assert not (cache / "extra").exists() and not (cache / "other.bin").exists()
    status = cluster.status("llama")
    total = len(OBJECTS["llama/config.json"]) + len(OBJECTS["llama/model.safetensors"])
    assert status["progress"] == {
        "percentage": 100,
        "displayPercentage": "100 %",
        "downloadedBytes": total,
        "totalBytes": total,
    }
    assert (status["download"]["protocol"], status["download"]["attempt"], status["download"]["totalAttempts"]) == (
        "S3",
        1,
        1,
    )
    assert status["download"]["message"].startswith("Complete")
    assert SECRET not in result.stdout + result.stderr


async def test_check_size_sums_the_objects_the_filter_keeps(tmp_path, s3_server, bucket):
    env = env_for(tmp_path, s3_server)

    default = await run(["check-size", f"s3://{bucket}/llama"], env)
    everything = await run(["check-size", f"s3://{bucket}/llama/"], {**env, "AIM_DOWNLOAD_FILTER": "{}"})

    assert default.code == 0, default.stderr
    assert json.loads(default.stdout.splitlines()[-1]) == {
        "url": f"s3://{bucket}/llama",
        "sizeBytes": len(OBJECTS["llama/config.json"]) + len(OBJECTS["llama/model.safetensors"]),
    }
    assert json.loads(everything.stdout.splitlines()[-1])["sizeBytes"] == sum(
        len(v) for k, v in OBJECTS.items() if k.startswith("llama/")
    )


async def test_an_interrupted_download_continues_where_it_stopped(tmp_path, s3, s3_server, proxy, cluster):
    s3.create_bucket(Bucket="resume")
    small, big = os.urandom(300_000), os.urandom(6_000_000)
    s3.put_object(Bucket="resume", Key="m/a.bin", Body=small)
    s3.put_object(Bucket="resume", Key="m/b.bin", Body=big)
    cluster.artifact("resume", "s3://resume/m")
    env = env_for(tmp_path, proxy.url, cluster, "resume", AIM_DOWNLOADER_WORKERS="1")
    cache = tmp_path / "cache"
    proxy.limit(3_000_000)  # the listing, a.bin and half of b.bin get through

    process = await start(["download", "s3://resume/m"], env)
    partial = cache / "b.bin.incomplete"
    await _wait_until(lambda: partial.exists() and partial.stat().st_size > 1_000_000)
    process.kill()  # no chance to clean up
    await finish(process)
    kept = partial.stat().st_size
    assert (cache / "a.bin").read_bytes() == small
    proxy.release()
    proxy.reset_count()

    result = await run(["download", "s3://resume/m"], env)

    assert result.code == 0, result.stderr
    assert (cache / "b.bin").read_bytes() == big
    assert not partial.exists()
    # a.bin is not fetched again and b.bin only from where it stopped (plus listing, headers and, on a
    # loaded machine, a retried request): far below a download from scratch (len(small) + len(big))
    assert proxy.received < len(big) - kept + 256_000
    assert cluster.status("resume")["progress"]["percentage"] == 100


async def test_a_stalled_transfer_fails_with_the_stall_exit_code(tmp_path, s3, proxy, cluster):
    s3.create_bucket(Bucket="stall")
    s3.put_object(Bucket="stall", Key="m/b.bin", Body=os.urandom(3_000_000))
    cluster.artifact("stall", "s3://stall/m")
    proxy.limit(1_000_000)

    result = await run(
        ["download", "s3://stall/m"], env_for(tmp_path, proxy.url, cluster, "stall", STALL_TIMEOUT="1.5")
    )

    assert result.code == Failure.STALLED.value
    assert cluster.status("stall")["download"]["message"].startswith("Failed: stalled")
    assert cluster.status("stall")["progress"]["percentage"] < 100
    proxy.release()


async def test_wrong_credentials_fail_as_unauthorized(tmp_path, s3_server, bucket, cluster, monkeypatch):
    from moto import settings

    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # the server now checks signatures
    cluster.artifact("denied", f"s3://{bucket}/llama")

    result = await run(["download", f"s3://{bucket}/llama"], env_for(tmp_path, s3_server, cluster, "denied"))
    size = await run(["check-size", f"s3://{bucket}/llama"], env_for(tmp_path, s3_server))

    assert result.code == size.code == Failure.AUTH.value
    assert "InvalidAccessKeyId" in result.stderr
    assert cluster.status("denied")["download"]["message"].startswith("Failed: S3 access denied")
    assert SECRET not in result.stdout + result.stderr + size.stdout + size.stderr
    assert size.stdout == ""


async def test_a_missing_bucket_or_prefix_fails_as_not_found(tmp_path, s3_server, bucket, cluster):
    cluster.artifact("nobucket", "s3://no-such-bucket/llama")

    no_bucket = await run(["download", "s3://no-such-bucket/llama"], env_for(tmp_path, s3_server, cluster, "nobucket"))
    no_prefix = await run(["check-size", f"s3://{bucket}/nothing-here"], env_for(tmp_path, s3_server))

    assert no_bucket.code == no_prefix.code == Failure.NOT_FOUND.value
    assert "NoSuchBucket" in no_bucket.stderr
    assert cluster.status("nobucket")["download"]["message"].startswith("Failed: NoSuchBucket")
    assert "nothing to download" in no_prefix.stderr


async def _wait_until(check, timeout: float = 30) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")
