"""``aim-engine artifact download hf://...`` as a process against a fake Hub and the API emulator."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path

from aim_core.downloader.sources import Failure
from aim_testing.hubserver import HubServer
from tests.downloader.conftest import NAMESPACE, TOKEN, Cluster, base_env, finish, run, start

WEIGHTS = os.urandom(3 * 1024 * 1024)
FILES = {
    "config.json": b'{"model_type": "llama"}',
    "model.safetensors": WEIGHTS,
    "tokenizer.json": b'{"version": "1.0"}' * 100,
    "original/consolidated.pth": os.urandom(200_000),  # in a subfolder: skipped by default
}


def env_for(tmp_path: Path, hub: HubServer, cluster: Cluster, name: str, **extra: str) -> dict[str, str]:
    settings = {
        "HF_ENDPOINT": hub.url,
        "ARTIFACT_NAME": name,
        "ARTIFACT_NAMESPACE": NAMESPACE,
        "AIM_DOWNLOADER_PROTOCOL": "XET,HF_TRANSFER",
        **cluster.env(),
    }
    return base_env(tmp_path, **{**settings, **extra})


async def test_download_fills_the_folder_and_reports_progress_to_the_artifact(tmp_path, hub, cluster):
    hub.add_repo("org/llama", FILES)
    cluster.artifact("llama", "hf://org/llama")

    result = await run(["download", "hf://org/llama"], env_for(tmp_path, hub, cluster, "llama"))

    assert result.code == 0, result.stderr
    cache = tmp_path / "cache"
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        assert (cache / name).read_bytes() == FILES[name]
    assert not (cache / "original").exists()
    status = cluster.status("llama")
    total = sum(len(FILES[n]) for n in ("config.json", "model.safetensors", "tokenizer.json"))
    assert status["progress"] == {
        "percentage": 100,
        "displayPercentage": "100 %",
        "downloadedBytes": total,
        "totalBytes": total,
    }
    assert status["download"]["protocol"] == "XET"
    assert status["download"]["attempt"] == 1
    assert status["download"]["totalAttempts"] == 2
    assert status["download"]["protocolSequence"] == "XET,HF_TRANSFER"
    assert status["download"]["message"].startswith("Complete")
    patches = cluster.status_patches("llama")
    percentages = [p["progress"]["percentage"] for p in patches if "progress" in p]
    assert percentages[-1] == 100 and all(p <= 99 for p in percentages[:-1])
    assert cluster.patch_tokens("llama") == {f"Bearer {TOKEN}"}


async def test_check_size_prints_the_filtered_size_as_the_last_line(tmp_path, hub):
    hub.add_repo("org/llama", FILES)
    env = base_env(tmp_path, HF_ENDPOINT=hub.url)

    default = await run(["check-size", "hf://org/llama"], env)
    everything = await run(["check-size", "hf://org/llama"], {**env, "AIM_DOWNLOAD_FILTER": "{}"})
    only = await run(
        ["check-size", "hf://org/llama"],
        {**env, "AIM_DOWNLOAD_FILTER": json.dumps({"include": ["*.json"], "exclude": ["tok*"]})},
    )

    assert default.code == 0, default.stderr
    assert json.loads(default.stdout.strip().splitlines()[-1]) == {
        "url": "hf://org/llama",
        "sizeBytes": sum(len(v) for k, v in FILES.items() if "/" not in k),
    }
    assert json.loads(everything.stdout.strip().splitlines()[-1])["sizeBytes"] == sum(len(v) for v in FILES.values())
    assert json.loads(only.stdout.strip().splitlines()[-1])["sizeBytes"] == len(FILES["config.json"])


async def test_the_filter_applies_to_the_download_as_to_the_size(tmp_path, hub, cluster):
    hub.add_repo("org/llama", FILES)
    cluster.artifact("llama", "hf://org/llama")
    env = env_for(tmp_path, hub, cluster, "llama", AIM_DOWNLOAD_FILTER=json.dumps({"include": ["original/*"]}))

    result = await run(["download", "hf://org/llama"], env)

    assert result.code == 0, result.stderr
    files = sorted(
        str(p.relative_to(tmp_path / "cache"))
        for p in (tmp_path / "cache").rglob("*")
        if p.is_file() and ".cache" not in p.parts
    )
    assert files == ["original/consolidated.pth"]
    assert cluster.status("llama")["progress"]["totalBytes"] == len(FILES["original/consolidated.pth"])


async def test_an_interrupted_download_resumes_without_fetching_completed_files_again(tmp_path, hub, cluster):
    # huggingface_hub writes in 10 MiB chunks: the hang leaves one chunk of the big file on disk
    files = {"config.json": b"{}", "a.safetensors": os.urandom(2_000_000), "b.safetensors": os.urandom(16 << 20)}
    hub.add_repo("org/big", files)
    hub.hang("org/big", "b.safetensors", after=12 << 20)
    cluster.artifact("big", "hf://org/big")
    env = env_for(tmp_path, hub, cluster, "big", AIM_DOWNLOADER_WORKERS="1")
    cache = tmp_path / "cache"

    process = await start(["download", "hf://org/big"], env)
    partial = await _wait_for_partial(cache, 10 << 20)
    process.kill()  # as when the node goes away: no chance to clean up (the transfer child dies with it)
    await finish(process)
    assert (cache / "a.safetensors").read_bytes() == files["a.safetensors"]
    assert not (cache / "b.safetensors").exists()
    hub.release_all()

    result = await run(["download", "hf://org/big"], env)

    assert result.code == 0, result.stderr
    assert (cache / "b.safetensors").read_bytes() == files["b.safetensors"]
    assert len(hub.gets("org/big", "a.safetensors")) == 1  # completed before the interruption: not fetched again
    assert len(hub.gets("org/big", "b.safetensors")) == 2
    assert not partial.exists() and not list(cache.rglob("*.incomplete"))  # the leftover is cleaned up
    status = cluster.status("big")
    assert status["progress"]["percentage"] == 100
    assert status["progress"]["downloadedBytes"] == sum(len(v) for v in files.values())


async def test_a_stalled_transfer_is_stopped_and_the_next_protocol_finishes(tmp_path, hub, cluster):
    files = {"config.json": b"{}", "model.safetensors": os.urandom(1_000_000)}
    hub.add_repo("org/slow", files)
    hub.hang("org/slow", "model.safetensors", after=100_000)
    cluster.artifact("slow", "hf://org/slow")
    env = env_for(tmp_path, hub, cluster, "slow", STALL_TIMEOUT="2", AIM_DOWNLOADER_PROTOCOL="XET,HTTP")

    result = await run(["download", "hf://org/slow"], env)

    assert result.code == 0, result.stderr
    assert (tmp_path / "cache" / "model.safetensors").read_bytes() == files["model.safetensors"]
    messages = [p["download"] for p in cluster.status_patches("slow") if "download" in p]
    assert any(m["protocol"] == "XET" and m["attempt"] == 1 and "stalled" in m["message"] for m in messages)
    final = cluster.status("slow")["download"]
    assert (final["protocol"], final["attempt"], final["totalAttempts"]) == ("HTTP", 2, 2)
    hub.release_all()


async def test_a_stall_on_the_last_protocol_fails_with_the_stall_exit_code(tmp_path, hub, cluster):
    hub.add_repo("org/slow", {"model.safetensors": os.urandom(1_000_000)})
    hub.hang("org/slow", "model.safetensors", after=10_000, times=5)
    cluster.artifact("slow", "hf://org/slow")
    env = env_for(tmp_path, hub, cluster, "slow", STALL_TIMEOUT="1.5", AIM_DOWNLOADER_PROTOCOL="HTTP")

    result = await run(["download", "hf://org/slow"], env)

    assert result.code == Failure.STALLED.value
    download = cluster.status("slow")["download"]
    assert download["message"].startswith("Failed: stalled")
    assert cluster.status("slow")["progress"]["percentage"] < 100
    hub.release_all()


async def test_a_gated_repository_without_access_fails_as_unauthorized_and_hides_the_token(tmp_path, hub, cluster):
    hub.add_repo("org/gated", {"config.json": b"{}"}, token="hf_the_right_token")
    cluster.artifact("gated", "hf://org/gated")
    secret = "hf_wrong_token_that_must_not_leak"
    env = env_for(tmp_path, hub, cluster, "gated", HF_TOKEN=secret)

    result = await run(["download", "hf://org/gated"], env)

    assert result.code == Failure.AUTH.value
    assert "Access to model org/gated is restricted" in result.stderr
    message = cluster.status("gated")["download"]["message"]
    assert message.startswith("Failed: Cannot access gated repo")
    assert secret not in result.stdout + result.stderr + json.dumps(cluster.status_patches("gated"))
    assert cluster.status("gated")["download"]["attempt"] == 1  # no point in trying the next protocol


async def test_a_token_with_access_downloads_the_gated_repository(tmp_path, hub, cluster):
    hub.add_repo("org/gated", {"config.json": b"{}"}, token="hf_the_right_token")
    cluster.artifact("gated", "hf://org/gated")

    result = await run(
        ["download", "hf://org/gated"], env_for(tmp_path, hub, cluster, "gated", HF_TOKEN="hf_the_right_token")
    )

    assert result.code == 0, result.stderr
    assert (tmp_path / "cache" / "config.json").read_bytes() == b"{}"


async def test_a_missing_repository_fails_as_not_found(tmp_path, hub, cluster):
    cluster.artifact("ghost", "hf://org/ghost")

    download = await run(["download", "hf://org/ghost"], env_for(tmp_path, hub, cluster, "ghost"))
    size = await run(["check-size", "hf://org/ghost"], base_env(tmp_path, HF_ENDPOINT=hub.url))

    assert download.code == size.code == Failure.NOT_FOUND.value
    assert "Repository Not Found" in download.stderr and "Repository Not Found" in size.stderr
    assert cluster.status("ghost")["download"]["message"].startswith("Failed: Repository Not Found")
    assert size.stdout == ""


async def test_without_a_cluster_the_download_still_works(tmp_path, hub):
    hub.add_repo("org/llama", {"config.json": b"{}"})

    result = await run(["download", "hf://org/llama"], base_env(tmp_path, HF_ENDPOINT=hub.url))

    assert result.code == 0, result.stderr
    assert "status reporting is off" in result.stderr
    assert (tmp_path / "cache" / "config.json").exists()


async def test_verification_catches_a_file_that_differs_from_the_published_checksum(tmp_path, hub, cluster):
    # A Hub (or a proxy in front of it) that serves other bytes than the digest it lists: the transfer
    # itself succeeds, the verification against the listed SHA-256 does not.
    repo = hub.add_repo("org/llama", {"config.json": b"{}", "model.safetensors": WEIGHTS})
    cluster.artifact("llama", "hf://org/llama")
    env = env_for(tmp_path, hub, cluster, "llama", AIM_DOWNLOADER_WORKERS="1", AIM_DOWNLOADER_PROTOCOL="HTTP")
    released = hub.hang("org/llama", "config.json", after=0)  # fetched first: the listing is done by then
    corrupted = bytearray(WEIGHTS)
    corrupted[100] ^= 0xFF

    process = await start(["download", "hf://org/llama"], env)
    await _wait_until(lambda: hub.gets("org/llama", "config.json"))
    repo.files["model.safetensors"] = bytes(corrupted)
    released.set()
    result = await finish(process)

    assert result.code == Failure.VERIFICATION.value, result.stderr
    status = cluster.status("llama")
    assert "model.safetensors: checksum" in status["download"]["message"]
    assert status["progress"]["percentage"] == 100  # the transfer ended: the operator reads VerificationFailed


async def test_a_file_corrupted_on_the_volume_is_fetched_again_by_the_next_run(tmp_path, hub, cluster):
    repo = hub.add_repo("org/llama", {"model.safetensors": WEIGHTS})
    cluster.artifact("llama", "hf://org/llama")
    env = env_for(tmp_path, hub, cluster, "llama")
    assert (await run(["download", "hf://org/llama"], env)).code == 0
    corrupted = bytearray(WEIGHTS)
    corrupted[100] ^= 0xFF
    weights = tmp_path / "cache" / "model.safetensors"
    before = weights.stat()
    weights.write_bytes(bytes(corrupted))  # same size, other bytes, same time: silent corruption
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert hashlib.sha256(corrupted).hexdigest() != hashlib.sha256(repo.files["model.safetensors"]).hexdigest()

    result = await run(["download", "hf://org/llama"], env)

    # no bookkeeping vouches for the file any more: it is hashed against the published digest, and fetched again
    assert result.code == 0, result.stderr
    assert weights.read_bytes() == WEIGHTS
    assert len(hub.gets("org/llama", "model.safetensors")) == 2
    assert cluster.status("llama")["download"]["message"].startswith("Complete")


async def _wait_until(check, timeout: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def _wait_for_partial(cache: Path, size: int, timeout: float = 30) -> Path:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        for path in cache.rglob("*.incomplete"):
            if path.stat().st_size >= size and (cache / "a.safetensors").exists():
                return path
        await asyncio.sleep(0.05)
    raise AssertionError(f"no partial file of {size} bytes appeared")


async def test_the_failure_debug_switch_fails_every_protocol_in_turn(tmp_path, hub, cluster):
    hub.add_repo("org/llama", {"config.json": b"{}"})
    cluster.artifact("llama", "hf://org/llama")

    result = await run(
        ["download", "hf://org/llama"], env_for(tmp_path, hub, cluster, "llama", AIM_DEBUG_CAUSE_FAILURE="true")
    )

    assert result.code == Failure.OTHER.value
    attempts = [
        (p["download"]["protocol"], p["download"]["attempt"])
        for p in cluster.status_patches("llama")
        if "download" in p and "failed" in p["download"]["message"]
    ]
    assert attempts == [("XET", 1), ("HF_TRANSFER", 2)]
    assert "AIM_DEBUG_CAUSE_FAILURE" in cluster.status("llama")["download"]["message"]


async def test_the_hang_debug_switch_is_caught_by_the_stall_detection(tmp_path, hub, cluster):
    hub.add_repo("org/llama", {"config.json": b"{}"})
    cluster.artifact("llama", "hf://org/llama")

    result = await run(
        ["download", "hf://org/llama"],
        env_for(
            tmp_path, hub, cluster, "llama", AIM_DEBUG_CAUSE_HANG="1", STALL_TIMEOUT="1", AIM_DOWNLOADER_PROTOCOL="HTTP"
        ),
    )

    assert result.code == Failure.STALLED.value
    assert "hanging on purpose" in result.stderr
    assert cluster.status("llama")["download"]["message"].startswith("Failed: stalled")


async def test_org_less_hub_ids_download_and_size_like_any_other(tmp_path, hub, cluster):
    # hf://gpt2 and hf://bert-base-uncased are valid Hub ids (upstream's aimartifact tests use hf://gpt2, issue 18)
    hub.add_repo("gpt2", FILES)
    cluster.artifact("gpt2", "hf://gpt2")

    size = await run(["check-size", "hf://gpt2"], base_env(tmp_path, HF_ENDPOINT=hub.url))
    assert size.code == 0, size.stderr
    assert json.loads(size.stdout.strip().splitlines()[-1]) == {
        "url": "hf://gpt2",
        "sizeBytes": sum(len(v) for k, v in FILES.items() if "/" not in k),
    }

    result = await run(["download", "hf://gpt2@main"], env_for(tmp_path, hub, cluster, "gpt2"))
    assert result.code == 0, result.stderr
    assert (tmp_path / "cache" / "model.safetensors").read_bytes() == WEIGHTS
