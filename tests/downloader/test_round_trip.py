"""A model downloaded from the Hub, copied as it is to a bucket and downloaded from there: the same tree.

As upstream's ``aimartifact/size-discovery-and-verification`` does on a node: ``hf://`` into
one volume, ``mc cp --recursive`` of that whole volume (hidden files included) to S3, then
``s3://`` into another volume, and ``du -sb`` plus the MD5 of every file compared. The Hub
is the fake one over TLS (a private CA), S3 is moto's server; the downloader runs as the
process a download Job starts.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from aim_testing.hubserver import HubServer
from aim_testing.throttle import Proxy
from aim_testing.tlsfiles import TlsFiles
from tests.downloader.conftest import base_env, run

KEY_ID, SECRET = "AKIATESTING", "testing-secret"
# The files of sshleifer/tiny-gpt2 (sizes scaled): small git files and LFS weights side by side.
FILES = {
    ".gitattributes": b"*.bin filter=lfs diff=lfs merge=lfs -text\n" * 20,
    "README.md": b"# tiny-gpt2\n",
    "config.json": b'{"model_type": "gpt2", "n_layer": 2}',
    "merges.txt": b"#version: 0.2\n" + b"a b\n" * 3000,
    "pytorch_model.bin": os.urandom(600_000),
    "tf_model.h5": os.urandom(400_000),
    "special_tokens_map.json": b'{"bos_token": "<|endoftext|>"}',
    "tokenizer_config.json": b'{"model_max_length": 1024}',
    "vocab.json": b'{"a": 0, "b": 1}' * 500,
}


@pytest.fixture()
def tls_hub(tls: TlsFiles) -> Iterator[HubServer]:
    with HubServer(ssl_context=tls.server_context()) as server:
        server.add_repo("sshleifer/tiny-gpt2", FILES)
        yield server


@pytest.fixture()
def proxy(s3_server: str) -> Iterator[Proxy]:
    url = urlsplit(s3_server)
    with Proxy(url.hostname or "127.0.0.1", url.port or 80) as p:
        yield p


def tree(root: Path) -> dict[str, tuple[int, str] | None]:
    """Every file (relative path -> size, MD5) and folder (-> None) below ``root``, hidden ones included."""
    out: dict[str, tuple[int, str] | None] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_dir():
            out[relative + "/"] = None
        else:
            out[relative] = (path.stat().st_size, hashlib.md5(path.read_bytes(), usedforsecurity=False).hexdigest())
    return out


def du_sb(root: Path) -> int:
    """``du -sb``: apparent sizes of every file and folder."""
    return sum(p.lstat().st_size for p in [root, *root.rglob("*")])


def upload_like_mc(s3, folder: Path, bucket: str, prefix: str) -> list[str]:
    """``mc cp --recursive <folder>/ s3://<bucket>/<prefix>/``: every file, hidden ones too."""
    keys = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            key = f"{prefix}/{path.relative_to(folder).as_posix()}"
            s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
            keys.append(key)
    return keys


def s3_env(tmp_path: Path, endpoint: str, target: Path) -> dict[str, str]:
    return base_env(
        tmp_path,
        TARGET_DIR=str(target),
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID=KEY_ID,
        AWS_SECRET_ACCESS_KEY=SECRET,
        AWS_EC2_METADATA_DISABLED="true",
    )


async def test_hub_to_bucket_and_back_gives_the_same_tree(tmp_path, tls_hub, tls, s3, s3_server, proxy):
    from_hub, from_s3 = tmp_path / "volume-hf", tmp_path / "volume-s3"
    hub_env = base_env(
        tmp_path, TARGET_DIR=str(from_hub), HF_ENDPOINT=tls_hub.url, AIM_DOWNLOADER_CA_FILE=str(tls.ca_file)
    )

    hub = await run(["download", "hf://sshleifer/tiny-gpt2"], hub_env)
    assert hub.code == 0, hub.stderr
    s3.create_bucket(Bucket="round-trip")
    keys = upload_like_mc(s3, from_hub, "round-trip", "tiny-gpt2")
    back = await run(["download", "s3://round-trip/tiny-gpt2"], s3_env(tmp_path, s3_server, from_s3))
    assert back.code == 0, back.stderr

    expected = {name: (len(data), hashlib.md5(data, usedforsecurity=False).hexdigest()) for name, data in FILES.items()}
    assert tree(from_hub) == expected  # the source's files and nothing else (no hidden bookkeeping)
    assert sorted(keys) == sorted(f"tiny-gpt2/{name}" for name in FILES)
    assert tree(from_s3) == tree(from_hub)
    assert du_sb(from_s3) == du_sb(from_hub)

    # Run again over the finished trees (a Job started once more): nothing is fetched again from the
    # bucket, no large file again from the Hub, and the trees stay as they were.
    proxy.reset_count()
    again_s3 = await run(["download", "s3://round-trip/tiny-gpt2"], s3_env(tmp_path, proxy.url, from_s3))
    again_hub = await run(["download", "hf://sshleifer/tiny-gpt2"], hub_env)

    assert again_s3.code == 0, again_s3.stderr
    assert again_hub.code == 0, again_hub.stderr
    assert proxy.received < 20_000  # the listing only: far below the 1 MB the objects hold
    assert len(tls_hub.gets("sshleifer/tiny-gpt2", "pytorch_model.bin")) == 1
    assert tree(from_s3) == tree(from_hub) == expected


async def test_a_bucket_holding_hub_metadata_is_copied_as_it_is(tmp_path, s3, s3_server):
    # a volume uploaded by another downloader (or mid-transfer) carries .cache/huggingface: with every
    # file wanted ({} filter) the bucket's files all arrive, and only the downloader's own records go
    s3.create_bucket(Bucket="with-metadata")
    objects = {
        "m/config.json": b"{}",
        "m/.cache/huggingface/.gitignore": b"*",
        "m/.cache/huggingface/download/config.json.metadata": b"abc\n123\n1.0\n",
    }
    for key, body in objects.items():
        s3.put_object(Bucket="with-metadata", Key=key, Body=body)
    target = tmp_path / "volume"

    result = await run(
        ["download", "s3://with-metadata/m"], {**s3_env(tmp_path, s3_server, target), "AIM_DOWNLOAD_FILTER": "{}"}
    )

    assert result.code == 0, result.stderr
    files = {k: v for k, v in tree(target).items() if v is not None}
    assert files == {
        key.removeprefix("m/"): (len(body), hashlib.md5(body, usedforsecurity=False).hexdigest())
        for key, body in objects.items()
    }
