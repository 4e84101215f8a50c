"""The ``AIM_DEBUG_SIMULATE_*`` switches: the downloader process plays a download without any source.

The fake Hub is started with no repository at all, so any real request would fail
with "not found": a passing simulation proves nothing was fetched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aim_core.downloader.simulate import SIMULATED_FILE, Simulation
from aim_core.downloader.sources import DownloadError, Failure, Source
from aim_testing.hubserver import HubServer
from tests.downloader.conftest import NAMESPACE, Cluster, base_env, run

SIZE = 50_000_000


def env_for(tmp_path: Path, hub: HubServer, cluster: Cluster, **extra: str) -> dict[str, str]:
    settings = {
        "HF_ENDPOINT": hub.url,
        "ARTIFACT_NAME": "llama",
        "ARTIFACT_NAMESPACE": NAMESPACE,
        "AIM_DOWNLOADER_PROTOCOL": "XET,HF_TRANSFER,HTTP",
        "EXPECTED_SIZE_BYTES": str(SIZE),
        "PROGRESS_INTERVAL": "0.1",
        **cluster.env(),
    }
    return base_env(tmp_path, **{**settings, **extra})


async def test_a_simulated_download_reports_progress_and_completes_without_fetching(tmp_path, hub, cluster):
    cluster.artifact("llama", "hf://org/llama")

    result = await run(
        ["download", "hf://org/llama"],
        env_for(
            tmp_path,
            hub,
            cluster,
            AIM_DEBUG_SIMULATE_DOWNLOAD="true",
            AIM_DEBUG_DOWNLOAD_DURATION="1",
            AIM_DEBUG_VERIFY_DURATION="0.2",
        ),
    )

    assert result.code == 0, result.stderr
    assert "simulating the download" in result.stderr
    assert not hub.requests, "a simulated download must not reach the source"
    simulated = tmp_path / "cache" / SIMULATED_FILE
    assert simulated.stat().st_size == SIZE
    assert simulated.stat().st_blocks * 512 < SIZE  # sparse: it takes (almost) no disk space
    patches = cluster.status_patches("llama")
    percents = [p["progress"]["percentage"] for p in patches if "progress" in p]
    assert percents[-1] == 100 and any(0 < p < 100 for p in percents), percents
    status = cluster.status("llama")
    assert status["download"]["message"].startswith("Complete")
    assert status["download"]["protocol"] == "XET" and status["download"]["attempt"] == 1


async def test_a_simulated_verification_failure_fails_like_a_real_one(tmp_path, hub, cluster):
    cluster.artifact("llama", "hf://org/llama")

    result = await run(
        ["download", "hf://org/llama"],
        env_for(
            tmp_path,
            hub,
            cluster,
            AIM_DEBUG_SIMULATE_DOWNLOAD="1",
            AIM_DEBUG_DOWNLOAD_DURATION="0.2",
            AIM_DEBUG_VERIFY_DURATION="0",
            AIM_DEBUG_VERIFY_FAIL="1",
        ),
    )

    assert result.code == Failure.VERIFICATION.value
    assert "AIM_DEBUG_VERIFY_FAIL" in cluster.status("llama")["download"]["message"]


async def test_the_simulated_hub_plays_the_protocol_fallback(tmp_path, hub, cluster):
    cluster.artifact("llama", "hf://org/llama")

    result = await run(
        ["download", "hf://org/llama"],
        env_for(
            tmp_path,
            hub,
            cluster,
            AIM_DEBUG_SIMULATE_HF_DOWNLOAD="1",
            AIM_DEBUG_SIMULATE_HF_DURATION="0.2",
            AIM_DEBUG_SIMULATE_HF_FAIL_PROTOCOLS="xet, HF_TRANSFER",
        ),
    )

    assert result.code == 0, result.stderr
    assert not hub.requests
    failed = [
        p["download"]["protocol"]
        for p in cluster.status_patches("llama")
        if "download" in p and "failed" in p["download"]["message"]
    ]
    assert failed == ["XET", "HF_TRANSFER"]
    status = cluster.status("llama")["download"]
    assert (status["protocol"], status["attempt"], status["totalAttempts"]) == ("HTTP", 3, 3)
    assert status["message"].startswith("Complete")


async def test_when_every_simulated_protocol_fails_the_download_fails_naming_the_last(tmp_path, hub, cluster):
    cluster.artifact("llama", "hf://org/llama")

    result = await run(
        ["download", "hf://org/llama"],
        env_for(
            tmp_path,
            hub,
            cluster,
            AIM_DOWNLOADER_PROTOCOL="XET,HTTP",
            AIM_DEBUG_SIMULATE_HF_DOWNLOAD="1",
            AIM_DEBUG_SIMULATE_HF_DURATION="0",
            AIM_DEBUG_SIMULATE_HF_FAIL_PROTOCOLS="XET,HTTP",
        ),
    )

    assert result.code == Failure.OTHER.value
    assert "simulated failure of HTTP" in cluster.status("llama")["download"]["message"]


async def test_check_size_under_simulation_answers_the_expected_size_without_the_source(tmp_path, hub, cluster):
    result = await run(
        ["check-size", "hf://org/llama"],
        env_for(tmp_path, hub, cluster, AIM_DEBUG_SIMULATE_DOWNLOAD="1", EXPECTED_SIZE_BYTES="12345"),
    )

    assert result.code == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == {"url": "hf://org/llama", "sizeBytes": 12345}
    assert not hub.requests


def test_the_hub_switch_leaves_s3_sources_alone_and_bad_durations_are_invalid():
    s3 = Source.parse("s3://bucket/model")
    assert Simulation.from_env({"AIM_DEBUG_SIMULATE_HF_DOWNLOAD": "1"}, s3) is None
    assert Simulation.from_env({"AIM_DEBUG_SIMULATE_DOWNLOAD": "1"}, s3) is not None
    assert Simulation.from_env({}, s3) is None
    with pytest.raises(DownloadError) as info:
        Simulation.from_env({"AIM_DEBUG_SIMULATE_DOWNLOAD": "1", "AIM_DEBUG_DOWNLOAD_DURATION": "soon"})
    assert info.value.kind is Failure.INVALID and "AIM_DEBUG_DOWNLOAD_DURATION" in str(info.value)


async def test_the_storage_initializer_entrypoint_downloads_each_pair_into_its_destination(tmp_path, hub):
    hub.add_repo("org/llama", {"config.json": b'{"model_type": "llama"}', "model.safetensors": b"w" * 4096})
    env = base_env(tmp_path, HF_ENDPOINT=hub.url, AIM_DOWNLOADER_PROTOCOL="HTTP")
    dest = tmp_path / "mnt" / "models"

    result = await run(["storage-initializer", "hf://org/llama", str(dest)], env)

    assert result.code == 0, result.stderr
    assert (dest / "model.safetensors").read_bytes() == b"w" * 4096
    assert not (tmp_path / "cache").exists(), "TARGET_DIR is replaced by the destination argument"
    assert "status reporting is off" in result.stderr

    odd = await run(["storage-initializer", "hf://org/llama"], env)
    assert odd.code == Failure.INVALID.value and "pairs" in odd.stderr
