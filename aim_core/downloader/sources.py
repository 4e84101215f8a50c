"""Source URIs, the files a source offers, and why a transfer failed.

``hf://[<org>/]<repo>[@<revision>]`` names a Hugging Face model repository (revision
``main`` by default; ids without an organisation, such as ``hf://gpt2``, are valid Hub ids); ``s3://<bucket>[/<prefix>]`` names every object under a prefix
(or one object). Remote paths become local paths under the target folder, so any
path that is absolute or climbs with ``..`` is refused rather than written.
"""

from __future__ import annotations

import enum
import json
import re

import attrs

_HF_REPO = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$")  # gpt2, org/model
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


class Failure(enum.Enum):
    """Why a download or size check failed; the value is the process exit code."""

    OTHER = 1
    INVALID = 2  # bad URI, filter or settings: retrying does not help
    AUTH = 3
    NOT_FOUND = 4
    STALLED = 5
    VERIFICATION = 6
    NO_SPACE = 7

    @property
    def permanent(self) -> bool:
        """Another protocol will not do better (the source itself refuses or lacks the files)."""
        return self in (Failure.INVALID, Failure.AUTH, Failure.NOT_FOUND, Failure.NO_SPACE)


class DownloadError(Exception):
    """A failure with its kind; the message is shown in logs and status and never holds secrets."""

    def __init__(self, kind: Failure, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@attrs.frozen
class Source:
    uri: str
    scheme: str  # "hf" or "s3"
    repo: str = ""  # hf: org/name
    revision: str = "main"
    bucket: str = ""  # s3
    prefix: str = ""  # s3, without a leading slash

    @classmethod
    def parse(cls, uri: str) -> Source:
        uri = uri.strip()
        if uri.startswith("hf://"):
            rest = uri[len("hf://") :].strip("/")
            repo, _, revision = rest.partition("@")
            if not _HF_REPO.match(repo) or ".." in repo.split("/"):
                raise DownloadError(
                    Failure.INVALID, f"invalid source {uri!r}: expected hf://[<org>/]<model>[@<revision>]"
                )
            if "@" in rest and not revision:
                raise DownloadError(Failure.INVALID, f"invalid source {uri!r}: empty revision after '@'")
            return cls(uri=uri, scheme="hf", repo=repo, revision=revision or "main")
        if uri.startswith("s3://"):
            bucket, _, prefix = uri[len("s3://") :].partition("/")
            if not _BUCKET.match(bucket):
                raise DownloadError(Failure.INVALID, f"invalid source {uri!r}: {bucket!r} is not a valid bucket name")
            if ".." in prefix.split("/"):
                raise DownloadError(Failure.INVALID, f"invalid source {uri!r}: '..' segments are not allowed")
            return cls(uri=uri, scheme="s3", bucket=bucket, prefix=prefix)
        raise DownloadError(Failure.INVALID, f"invalid source {uri!r}: only hf:// and s3:// are supported")


@attrs.frozen
class RemoteFile:
    """One file of a source: its path below the target folder, size, and what to check it against."""

    path: str
    size: int
    sha256: str | None = None  # hf LFS files
    git_blob: str | None = None  # hf small files: git object id
    key: str = ""  # s3 object key
    etag: str = ""  # s3 ETag, to notice a changed object between runs


def safe_relative_path(path: str, where: str) -> str:
    """``path`` if it stays inside the target folder, else a :class:`DownloadError`."""
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts):
        raise DownloadError(
            Failure.INVALID, f"{where} offers a file with an unsafe path {path!r}; refusing to write it"
        )
    return path


@attrs.frozen
class Manifest:
    """What a source offers after filtering, with the revision it was listed at."""

    source: Source
    files: tuple[RemoteFile, ...]
    revision: str = ""  # hf: commit sha

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def to_json(self) -> str:
        return json.dumps(attrs.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        data = json.loads(text)
        return cls(
            source=Source(**data["source"]),
            files=tuple(RemoteFile(**f) for f in data["files"]),
            revision=data.get("revision", ""),
        )
