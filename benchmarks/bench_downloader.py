"""Benchmark: the artifact downloader against a plain copy of the same bytes from the same local server.

    python benchmarks/bench_downloader.py [--size-mb 256] [--files 8] [--interval 0.25]

For each source (the fake Hub through ``HF_ENDPOINT``, moto's S3 server) it fetches the
same files twice: once with a plain sequential copy (one streaming GET per file written
to disk in 1 MiB chunks: httpx for the Hub, boto3 ``get_object`` for S3), once with
``aim-engine artifact download`` as a process, reporting to the API emulator over TLS.
Reported: the throughput ratio downloader / copy for the transfer phase (the
downloader's own "transfer:" log line) and end to end (process start to exit,
listing and verification included), and the number of progress patches against the
bound its interval allows. See benchmarks/README.md. Missed targets are reported, not
failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import kmock  # noqa: E402

from aim_core.api.crds import generate_crds  # noqa: E402
from aim_testing.emulator import Emulator, declare_resources  # noqa: E402
from aim_testing.hubserver import HubServer  # noqa: E402
from aim_testing.tlsfiles import make_tls_files  # noqa: E402
from benchmarks.harness import QuickServer  # noqa: E402

NAMESPACE = "bench"
TARGET_RATIO = 0.8
AIM_ENGINE = str(Path(sys.executable).parent / "aim-engine")
_TRANSFER = re.compile(r"transfer: (\d+) bytes in ([0-9.]+) s")


def make_files(size_mb: int, count: int) -> dict[str, bytes]:
    each = max(1, size_mb * (1 << 20) // count)
    block = os.urandom(1 << 20)
    files = {}
    for i in range(count):
        data = (block * (each // len(block) + 1))[:each]
        files[f"model-{i + 1:05d}-of-{count:05d}.safetensors"] = bytes([i % 256]) + data[1:]
    files["config.json"] = b'{"model_type": "llama"}'
    return files


def copy_from_hub(url: str, repo: str, sha: str, names: list[str], into: Path) -> float:
    into.mkdir(parents=True)
    started = time.perf_counter()
    with httpx.Client(timeout=60) as client:
        for name in names:
            with client.stream("GET", f"{url}/{repo}/resolve/{sha}/{name}") as response, open(into / name, "wb") as out:
                response.raise_for_status()
                for chunk in response.iter_bytes(1 << 20):
                    out.write(chunk)
    return time.perf_counter() - started


def copy_from_s3(s3: Any, bucket: str, keys: list[str], into: Path) -> float:
    into.mkdir(parents=True)
    started = time.perf_counter()
    for key in keys:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"]
        with open(into / key.rsplit("/", 1)[-1], "wb") as out:
            for chunk in body.iter_chunks(1 << 20):
                out.write(chunk)
    return time.perf_counter() - started


async def run_downloader(uri: str, env: dict[str, str]) -> tuple[float, float, int, str]:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        AIM_ENGINE,
        "artifact",
        "download",
        uri,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await process.communicate()
    total = time.perf_counter() - started
    text = stderr.decode()
    if process.returncode != 0:
        raise RuntimeError(f"downloader failed ({process.returncode}):\n{text}")
    match = _TRANSFER.search(text)
    assert match, text
    return total, float(match[2]), int(match[1]), text


def progress_patches(emulator: Emulator, name: str) -> list[float]:
    return [
        i
        for i, r in enumerate(emulator)
        if r.method.value == "PATCH"
        and r.subresource == "status"
        and r.name == name
        and isinstance(r.data, dict)
        and "progress" in r.data.get("status", {})
    ]


async def bench_source(
    kind: str,
    uri: str,
    env: dict[str, str],
    copy_seconds: float,
    size: int,
    emulator: Emulator,
    name: str,
    interval: float,
    work: Path,
) -> dict[str, Any]:
    emulator.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMArtifact",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"sourceUri": uri},
        }
    )
    target = work / f"{kind}-cache"
    run_env = {**env, "TARGET_DIR": str(target), "ARTIFACT_NAME": name, "AIM_DOWNLOADER_VERIFY": "size"}
    total, transfer, moved, _ = await run_downloader(uri, run_env)
    patches = len(progress_patches(emulator, name))
    bound = int(total / interval) + 3  # one per interval, plus the first, the verifying and the final one
    shutil.rmtree(target)
    checksum_total, _, _, _ = await run_downloader(
        uri, {**run_env, "AIM_DOWNLOADER_VERIFY": "checksum", "ARTIFACT_NAME": ""}
    )
    shutil.rmtree(target)
    copy_rate = size / copy_seconds
    return {
        "bytes": size,
        "copy": {"seconds": round(copy_seconds, 3), "MBps": round(copy_rate / 1e6, 1)},
        "downloader": {
            "transfer_seconds": round(transfer, 3),
            "transfer_MBps": round(moved / transfer / 1e6, 1),
            "end_to_end_seconds": round(total, 3),
            "end_to_end_checksum_seconds": round(checksum_total, 3),
        },
        "ratio_transfer": round((moved / transfer) / copy_rate, 2),
        "ratio_end_to_end": round(copy_seconds / total, 2),
        "progress_patches": {
            "count": patches,
            "interval_s": interval,
            "bound": bound,
            "within_bound": patches <= bound,
        },
    }


async def run_benchmark(
    size_mb: int = 256, files: int = 8, interval: float = 0.25, workers: int = 8, say: Any = print
) -> dict[str, Any]:
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log

    work = Path(tempfile.mkdtemp(prefix="aim-bench-dl-"))
    tls = make_tls_files(work / "tls")
    sa_dir = work / "sa"
    sa_dir.mkdir()
    (sa_dir / "token").write_text("bench")
    (sa_dir / "ca.crt").write_bytes(tls.ca_file.read_bytes())
    context = tls.server_context()

    class TlsServer(QuickServer):
        async def start_server(self, **kwargs: Any) -> None:
            await super().start_server(ssl=context, **kwargs)

    content = make_files(size_mb, files)
    size = sum(len(v) for v in content.values())
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    results: dict[str, Any] = {"size_mb": size_mb, "files": files + 1, "workers": workers, "target_ratio": TARGET_RATIO}
    try:
        emulator = declare_resources(Emulator(), crds=generate_crds())
        async with emulator, kmock.Server(emulator, server_cls=TlsServer) as server:
            base = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG")}
            base.update(
                {
                    "TMPDIR": str(work),
                    "HOME": str(work),
                    "HF_HOME": str(work / "hf"),
                    "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                    "KUBERNETES_SERVICE_PORT": str(server.port),
                    "AIM_SERVICEACCOUNT_DIR": str(sa_dir),
                    "ARTIFACT_NAMESPACE": NAMESPACE,
                    "PROGRESS_INTERVAL": str(interval),
                    "AIM_DOWNLOAD_FILTER": "{}",
                    "AIM_DOWNLOADER_WORKERS": str(workers),
                }
            )
            with HubServer() as hub:
                repo = hub.add_repo("bench/model", content)
                say(f"hub: plain copy of {size / 1e6:.0f} MB ...")
                copy_s = await asyncio.to_thread(
                    copy_from_hub, hub.url, "bench/model", repo.sha, list(content), work / "copy-hub"
                )
                shutil.rmtree(work / "copy-hub")
                say("hub: downloader ...")
                results["hf"] = await bench_source(
                    "hf",
                    "hf://bench/model",
                    {**base, "HF_ENDPOINT": hub.url, "AIM_DOWNLOADER_PROTOCOL": "HTTP"},
                    copy_s,
                    size,
                    emulator,
                    "bench-hf",
                    interval,
                    work,
                )
            import boto3

            host, port = moto.get_host_and_port()
            endpoint = f"http://{host}:{port}"
            s3 = boto3.client(
                "s3",
                endpoint_url=endpoint,
                region_name="us-east-1",
                aws_access_key_id="bench",
                aws_secret_access_key="bench",
            )
            s3.create_bucket(Bucket="bench")
            for name, data in content.items():
                s3.put_object(Bucket="bench", Key=f"model/{name}", Body=data)
            say("s3: plain copy ...")
            copy_s = await asyncio.to_thread(
                copy_from_s3, s3, "bench", [f"model/{n}" for n in content], work / "copy-s3"
            )
            shutil.rmtree(work / "copy-s3")
            say("s3: downloader ...")
            results["s3"] = await bench_source(
                "s3",
                "s3://bench/model",
                {**base, "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"},
                copy_s,
                size,
                emulator,
                "bench-s3",
                interval,
                work,
            )
    finally:
        moto.stop()
        shutil.rmtree(work, ignore_errors=True)
    return results


def render(results: dict[str, Any]) -> str:
    lines = [
        f"{results['size_mb']} MB in {results['files']} files, {results['workers']} workers; "
        f"target ratio >= {results['target_ratio']}"
    ]
    for kind in ("hf", "s3"):
        r = results[kind]
        d, p = r["downloader"], r["progress_patches"]
        verdict = "met" if r["ratio_transfer"] >= results["target_ratio"] else "MISSED"
        lines.append(
            f"{kind}: copy {r['copy']['MBps']} MB/s; downloader transfer {d['transfer_MBps']} MB/s "
            f"-> ratio {r['ratio_transfer']} ({verdict}); end to end {d['end_to_end_seconds']} s "
            f"(ratio {r['ratio_end_to_end']}), with checksums {d['end_to_end_checksum_seconds']} s; "
            f"progress patches {p['count']} <= {p['bound']} ({'ok' if p['within_bound'] else 'TOO MANY'})"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=256)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--interval", type=float, default=0.25, help="PROGRESS_INTERVAL for the run")
    parser.add_argument("--workers", type=int, default=8, help="AIM_DOWNLOADER_WORKERS for the run")
    parser.add_argument("--output", default=str(Path(__file__).parent / "results" / "downloader.json"))
    args = parser.parse_args()
    results = asyncio.run(run_benchmark(args.size_mb, args.files, args.interval, args.workers))
    print(render(results))
    Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
