"""S3 sources through boto3: list the objects under a prefix, fetch them resumably.

Credentials come the usual boto3 ways (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``,
web identity, instance roles). ``AWS_ENDPOINT_URL`` selects an S3-compatible store (path
addressing then); an endpoint without a scheme is ``https://`` unless ``S3_NO_SSL`` is
true, as with the upstream image.

Each object is streamed into ``<file>.incomplete`` next to its final place and renamed
when complete. A small record under ``.cache/aim-downloader/`` keeps the object's ETag,
so a later run skips complete files and continues a partial one with a range request,
unless the object changed in between. The records go once the download is verified
(the served folder holds the source's files only); a file already there without a
record is kept when its size and MD5 match the object's ETag (a single-part upload's
ETag is the MD5 of its content), else fetched again.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from aim_core.downloader.filters import DownloadFilter
from aim_core.downloader.parallel import fetch_each
from aim_core.downloader.sources import DownloadError, Failure, Manifest, RemoteFile, Source, safe_relative_path

RECORDS = Path(".cache") / "aim-downloader" / "s3"
CHUNK = 1 << 20
_AUTH_CODES = {
    "AccessDenied",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "InvalidToken",
    "ExpiredToken",
    "AllAccessDisabled",
    "AccountProblem",
    "403",
    "401",
}
_NOT_FOUND_CODES = {"NoSuchBucket", "NoSuchKey", "404"}
_PLAIN_MD5 = re.compile(r'^"?([0-9a-fA-F]{32})"?$')  # a multipart ETag ends in -<parts>: not a content hash


def client(env: Mapping[str, str] | None = None) -> Any:
    import boto3
    from botocore.config import Config

    env = os.environ if env is None else env
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None
    no_ssl = env.get("S3_NO_SSL", "").strip().lower() in ("1", "true", "yes")
    if endpoint and "://" not in endpoint:
        endpoint = ("http://" if no_ssl else "https://") + endpoint
    config = Config(
        retries={"max_attempts": 5, "mode": "standard"},
        max_pool_connections=32,
        s3={"addressing_style": "path"} if endpoint else {},
        signature_version="s3v4",
    )
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
    return boto3.client(
        "s3", endpoint_url=endpoint, region_name=region, config=config, use_ssl=not (no_ssl and not endpoint)
    )


def list_objects(source: Source, flt: DownloadFilter, s3: Any | None = None) -> Manifest:
    s3 = client() if s3 is None else s3
    prefix = source.prefix
    files: list[RemoteFile] = []
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=source.bucket, Prefix=prefix)
        for page in pages:
            for obj in page.get("Contents", []):
                key = obj["Key"]
                path = _relative(key, prefix)
                if path is None or not flt.keeps(path):
                    continue
                safe_relative_path(path, source.uri)
                files.append(RemoteFile(path=path, size=int(obj["Size"]), key=key, etag=obj.get("ETag", "")))
    except Exception as exc:  # noqa: BLE001 - mapped to a failure kind below
        raise failure_of(exc, source) from None
    return Manifest(source=source, files=tuple(files))


def fetch(
    manifest: Manifest, target: Path, workers: int, progress: Callable[[str], None] | None = None, s3: Any | None = None
) -> None:
    s3 = client() if s3 is None else s3
    bucket = manifest.source.bucket
    fetch_each(
        manifest,
        lambda f: _fetch_one(s3, bucket, f, target),
        workers=workers,
        name="s3",
        failure_of=failure_of,
        progress=progress,
    )


def is_complete(target: Path, f: RemoteFile) -> bool:
    final = target / f.path
    if not final.is_file() or final.stat().st_size != f.size:
        return False
    record = _read_record(target, f.path)
    if record:
        return record.get("etag") == f.etag and bool(record.get("complete"))
    return _same_md5(final, f.etag)


def _same_md5(path: Path, etag: str) -> bool:
    plain = _PLAIN_MD5.match(etag or "")
    if plain is None:
        return False
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK * 4):
            digest.update(chunk)
    return digest.hexdigest() == plain.group(1).lower()


def _fetch_one(s3: Any, bucket: str, f: RemoteFile, target: Path) -> None:
    if is_complete(target, f):
        return
    final = target / f.path
    part = final.with_name(final.name + ".incomplete")
    final.parent.mkdir(parents=True, exist_ok=True)
    record = _read_record(target, f.path)
    offset = part.stat().st_size if part.is_file() and record.get("etag") == f.etag else 0
    if offset > f.size:
        offset = 0
    _write_record(target, f.path, {"etag": f.etag, "size": f.size, "complete": False})
    if offset < f.size:
        args: dict[str, Any] = {"Bucket": bucket, "Key": f.key}
        if offset:
            args["Range"] = f"bytes={offset}-"
        if f.etag:
            args["IfMatch"] = f.etag
        body = s3.get_object(**args)["Body"]
        with open(part, "ab" if offset else "wb") as out:
            for chunk in body.iter_chunks(CHUNK):
                out.write(chunk)
    elif not part.exists():
        part.touch()
    if part.stat().st_size != f.size:
        raise DownloadError(Failure.OTHER, f"s3://{bucket}/{f.key}: got {part.stat().st_size} of {f.size} bytes")
    os.replace(part, final)
    _write_record(target, f.path, {"etag": f.etag, "size": f.size, "complete": True})


def _relative(key: str, prefix: str) -> str | None:
    if key.endswith("/"):
        return None  # folder marker
    if not prefix:
        return key
    if key == prefix:
        return key.rsplit("/", 1)[-1]
    base = prefix if prefix.endswith("/") else prefix + "/"
    return key[len(base) :] if key.startswith(base) else None


def _record_path(target: Path, path: str) -> Path:
    return target / RECORDS / (path + ".json")


def _read_record(target: Path, path: str) -> dict[str, Any]:
    try:
        return json.loads(_record_path(target, path).read_text())
    except (OSError, ValueError):
        return {}


def _write_record(target: Path, path: str, record: dict[str, Any]) -> None:
    file = _record_path(target, path)
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(file.name + ".tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, file)


def failure_of(exc: BaseException, source: Source) -> DownloadError:
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

    if isinstance(exc, DownloadError):
        return exc
    if isinstance(exc, NoCredentialsError):
        return DownloadError(
            Failure.AUTH,
            f"S3 credentials not found for {source.uri} (NoCredentialProviders); "
            "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
        )
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = str(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))
        if code in _AUTH_CODES or status in ("401", "403"):
            return DownloadError(
                Failure.AUTH,
                f"S3 access denied for {source.uri} ({code or status}); "
                "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket policy",
            )
        if code in _NOT_FOUND_CODES or status == "404":
            return DownloadError(Failure.NOT_FOUND, f"{code or 'NoSuchKey'}: {source.uri} not found (s3 404)")
        return DownloadError(Failure.OTHER, f"S3 error for {source.uri}: {code or status}")
    if isinstance(exc, EndpointConnectionError):
        return DownloadError(Failure.OTHER, f"cannot reach the S3 endpoint for {source.uri}: {exc}")
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DownloadError(Failure.NO_SPACE, f"no space left on device while downloading {source.uri}")
    return DownloadError(Failure.OTHER, f"downloading {source.uri} failed: {type(exc).__name__}: {exc}"[:600])
