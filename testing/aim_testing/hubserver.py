"""A local HTTP server that answers like the Hugging Face Hub file API, for downloader tests.

``huggingface_hub`` talks to it when ``HF_ENDPOINT`` names it. It serves what the
downloader and ``huggingface_hub`` use:

* ``GET /api/models/<repo>/revision/<rev>`` -- model info with ``siblings``
  (``rfilename``, ``size``, ``blobId``, ``lfs.sha256`` for large files);
* ``HEAD``/``GET /<repo>/resolve/<rev>/<file>`` -- with ``ETag``, ``X-Repo-Commit``,
  ``Content-Length``, ``Accept-Ranges`` and ``Range`` requests answered with 206.

Errors carry the Hub's ``X-Error-Code`` header (``RepoNotFound``, ``GatedRepo``,
``EntryNotFound``) so the client raises its usual exceptions. Faults are injected per
file: :meth:`HubServer.hang` stops a response after some bytes until released.
Every request is logged in :attr:`HubServer.requests`.
"""

from __future__ import annotations

import hashlib
import json
import re
import ssl
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import attrs

LFS_THRESHOLD = 1024  # files at least this big are served as LFS files (sha256 ETag)
CHUNK = 1 << 20


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's object id


@attrs.define
class Repo:
    files: dict[str, bytes]
    sha: str
    token: str | None = None  # when set, requests must carry "Authorization: Bearer <token>"
    gated: bool = True  # a wrong token gets 401 GatedRepo (else 401 RepoNotFound, as for private repos)


@attrs.frozen
class Request:
    method: str
    path: str
    range: str | None
    authorized: bool


@attrs.define
class _Hang:
    after: int
    released: threading.Event = attrs.field(factory=threading.Event)
    times: int = 1


class HubServer:
    """The fake Hub on 127.0.0.1; use as a context manager. ``url`` goes into ``HF_ENDPOINT``."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.repos: dict[str, Repo] = {}
        self.requests: list[Request] = []
        self._hangs: dict[tuple[str, str], _Hang] = {}
        self._lock = threading.Lock()
        self._ssl = ssl_context
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ set-up

    def add_repo(
        self, repo_id: str, files: Mapping[str, bytes], *, token: str | None = None, gated: bool = True
    ) -> Repo:
        digest = hashlib.sha1(repo_id.encode())  # noqa: S324 - a fake commit id
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + files[name])
        sha = digest.hexdigest()  # noqa: S324 - a fake commit id
        repo = Repo(files=dict(files), sha=sha, token=token, gated=gated)
        self.repos[repo_id] = repo
        return repo

    def hang(self, repo_id: str, filename: str, after: int, times: int = 1) -> threading.Event:
        """Make the next ``times`` GETs of a file stop after ``after`` bytes until the returned event is set."""
        hang = _Hang(after=after, times=times)
        self._hangs[repo_id, filename] = hang
        return hang.released

    def release_all(self) -> None:
        for hang in self._hangs.values():
            hang.released.set()
        self._hangs.clear()

    def gets(self, repo_id: str, filename: str) -> list[Request]:
        """GET requests (content transfers) of one file so far."""
        path = f"/{repo_id}/resolve/"
        with self._lock:
            return [
                r
                for r in self.requests
                if r.method == "GET" and r.path.startswith(path) and r.path.endswith("/" + filename)
            ]

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        assert self._server is not None
        scheme = "https" if self._ssl else "http"
        return f"{scheme}://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HubServer:
        hub = self

        class Handler(_Handler):
            server_ref = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        if self._ssl is not None:
            self._server.socket = self._ssl.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-hub", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release_all()
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    # ------------------------------------------------------------------ internals

    def _log(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _take_hang(self, repo_id: str, filename: str) -> _Hang | None:
        with self._lock:
            hang = self._hangs.get((repo_id, filename))
            if hang is None or hang.times <= 0:
                return None
            hang.times -= 1
            return hang


_MODEL_INFO = re.compile(r"^/api/models/(?P<repo>(?:[^/]+/)?[^/]+?)(?:/revision/(?P<rev>[^/]+))?$")
_RESOLVE = re.compile(r"^/(?P<repo>(?:[^/]+/)?[^/]+?)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


class _Handler(BaseHTTPRequestHandler):
    server_ref: HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._serve(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(head=True)

    # ------------------------------------------------------------------

    def _serve(self, head: bool) -> None:
        hub = self.server_ref
        path = unquote(urlsplit(self.path).path)
        auth = self.headers.get("Authorization", "")
        match = _MODEL_INFO.match(path) or _RESOLVE.match(path)
        repo = hub.repos.get(match["repo"]) if match else None
        authorized = repo is not None and (repo.token is None or auth == f"Bearer {repo.token}")
        hub._log(Request(self.command, path, self.headers.get("Range"), authorized))
        if match is None:
            return self._error(404, "RepoNotFound", "Not found")
        if repo is None:
            return self._error(401, "RepoNotFound", "Repository not found")
        if not authorized:
            if repo.gated:
                return self._error(401, "GatedRepo", f"Access to model {match['repo']} is restricted.")
            return self._error(401, "RepoNotFound", "Repository not found")
        rev = match["rev"] or "main"
        if rev not in ("main", repo.sha):
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        if "file" in match.groupdict() and match.groupdict().get("file"):
            return self._file(match["repo"], repo, match["file"], head)
        return self._info(match["repo"], repo)

    def _info(self, repo_id: str, repo: Repo) -> None:
        siblings = []
        for name, data in sorted(repo.files.items()):
            entry: dict[str, Any] = {"rfilename": name, "size": len(data), "blobId": git_blob_id(data)}
            if len(data) >= LFS_THRESHOLD:
                entry["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            siblings.append(entry)
        body = json.dumps(
            {
                "id": repo_id,
                "modelId": repo_id,
                "sha": repo.sha,
                "private": repo.token is not None,
                "siblings": siblings,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _file(self, repo_id: str, repo: Repo, filename: str, head: bool) -> None:
        data = repo.files.get(filename)
        if data is None:
            return self._error(404, "EntryNotFound", f"Entry not found: {filename}")
        etag = hashlib.sha256(data).hexdigest() if len(data) >= LFS_THRESHOLD else git_blob_id(data)
        start, end = 0, len(data)
        status = 200
        wanted = self.headers.get("Range")
        if wanted and (m := _RANGE.match(wanted.strip())):
            start = int(m[1])
            end = min(len(data), int(m[2]) + 1) if m[2] else len(data)
            if start >= len(data) and len(data) > 0:
                return self._error(416, None, "Range not satisfiable")
            status = 206
        self.send_response(status)
        self.send_header("ETag", f'"{etag}"')
        self.send_header("X-Repo-Commit", repo.sha)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.end_headers()
        if head:
            return
        hang = self.server_ref._take_hang(repo_id, filename)
        view = memoryview(data)[start:end]
        try:
            if hang is not None:
                cut = max(0, min(len(view), hang.after - start))
                self.wfile.write(view[:cut])
                self.wfile.flush()
                hang.released.wait()
                self.close_connection = True
                return  # the client sees a short body
            for offset in range(0, len(view), CHUNK):
                self.wfile.write(view[offset : offset + CHUNK])
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def _error(self, code: int, error_code: str | None, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(code)
        if error_code:
            self.send_header("X-Error-Code", error_code)
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
