"""A local OpenAI-compatible server with known token timing, for benchmark tests.

It serves what benchmark tools send to vLLM/SGLang-style servers:

* ``GET /v1/models`` -- the one model it serves;
* ``POST /v1/chat/completions`` and ``POST /v1/completions`` -- streamed (SSE,
  ``data: {...}`` lines, ``data: [DONE]``, one HTTP chunk per event) or not. A streamed answer sends its first
  token ``ttft`` seconds after the request arrived and each next one ``itl`` seconds
  later, on a schedule (no drift), ``max_tokens`` tokens in all (16 when unset),
  then a usage chunk (``prompt_tokens`` = words of the prompt, ``completion_tokens``).

So a tool that measures it should see TTFT ~ ``ttft``, inter-token latency ~ ``itl``
and end-to-end latency ~ ``ttft + (max_tokens - 1) * itl``. ``fail=True`` answers
every completion with 500; ``api_key`` makes it demand ``Authorization: Bearer <key>``.
It listens on 127.0.0.1 only; every completion request is logged in :attr:`requests`.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

__all__ = ["OpenAIServer"]


@attrs.define
class OpenAIServer:
    model: str = "fake-model"
    ttft: float = 0.05
    itl: float = 0.01
    fail: bool = False
    api_key: str | None = None
    requests: list[dict[str, Any]] = attrs.field(factory=list)
    _server: ThreadingHTTPServer | None = attrs.field(default=None, init=False)
    _thread: threading.Thread | None = attrs.field(default=None, init=False)

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> OpenAIServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # streamed answers are chunked, so clients see each event at once

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                if fake.api_key is None:
                    return True
                if self.headers.get("Authorization") == f"Bearer {fake.api_key}":
                    return True
                self._json(401, {"error": {"message": "invalid api key", "code": 401}})
                return False

            def do_GET(self) -> None:
                if not self._authorized():
                    return
                if self.path.rstrip("/") == "/v1/models":
                    self._json(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
                elif self.path in ("/health", "/v1/health"):
                    self._json(200, {})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}", "code": 404}})

            def do_POST(self) -> None:
                try:
                    self._post()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on the answer (a tool stopping at its bound)

            def _post(self) -> None:
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self._authorized():
                    return
                chat = self.path.rstrip("/") == "/v1/chat/completions"
                if not chat and self.path.rstrip("/") != "/v1/completions":
                    self._json(404, {"error": {"message": f"no route {self.path}", "code": 404}})
                    return
                fake.requests.append({"path": self.path, "body": body})
                if fake.fail:
                    self._json(500, {"error": {"message": "the fake server fails on purpose", "code": 500}})
                    return
                if chat:
                    prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
                else:
                    prompt = str(body.get("prompt", ""))
                prompt_tokens = len(prompt.split())
                n = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
                usage = {"prompt_tokens": prompt_tokens, "completion_tokens": n, "total_tokens": prompt_tokens + n}
                kind = "chat.completion" if chat else "text_completion"
                if not body.get("stream"):
                    time.sleep(max(0.0, arrived + fake.ttft + (n - 1) * fake.itl - time.monotonic()))
                    text = " ".join("tok" for _ in range(n))
                    choice = {"index": 0, "finish_reason": "length"}
                    choice |= {"message": {"role": "assistant", "content": text}} if chat else {"text": text}
                    self._json(
                        200, {"id": "x", "object": kind, "model": fake.model, "choices": [choice], "usage": usage}
                    )
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

                def send(obj: dict[str, Any] | str) -> None:
                    data = obj if isinstance(obj, str) else json.dumps(obj)
                    event = f"data: {data}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()

                for i in range(n):
                    time.sleep(max(0.0, arrived + fake.ttft + i * fake.itl - time.monotonic()))
                    last = i == n - 1
                    if chat:
                        delta = {"content": " tok"} | ({"role": "assistant"} if i == 0 else {})
                        choice = {"index": 0, "delta": delta, "finish_reason": "length" if last else None}
                    else:
                        choice = {"index": 0, "text": " tok", "finish_reason": "length" if last else None}
                    send({"id": "x", "object": f"{kind}.chunk", "model": fake.model, "choices": [choice]})
                options = body.get("stream_options") or {}
                if options.get("include_usage"):
                    send({"id": "x", "object": f"{kind}.chunk", "model": fake.model, "choices": [], "usage": usage})
                send("[DONE]")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-fake", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
