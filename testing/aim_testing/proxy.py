"""A TCP proxy in front of an API server that a test can take away and bring back.

``async with Proxy(upstream_url) as proxy:`` serves ``proxy.url`` on 127.0.0.1;
``proxy.down()`` cuts every open connection (watch streams included) and
refuses new ones, as an API server that restarts does; ``proxy.up()`` serves
again. ``proxy.received`` counts the bytes the server sent to its clients. It works the same in front of the emulator and a real kube-apiserver.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit


class Proxy:
    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.scheme = parts.scheme or "http"
        self.upstream_host = parts.hostname or "127.0.0.1"
        self.upstream_port = parts.port or (443 if self.scheme == "https" else 80)
        self.serving = True
        self.connections = 0  # accepted while up (for tests)
        self.received = 0  # bytes the server sent to the clients (what the client had to read and decode)
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"{self.scheme}://127.0.0.1:{port}"

    async def __aenter__(self) -> Proxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.down()
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    def down(self) -> None:
        """Cut every open connection and refuse new ones until :meth:`up`."""
        self.serving = False
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    def up(self) -> None:
        self.serving = True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.serving:
            writer.transport.abort()
            return
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(self.upstream_host, self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        self._open.update((writer, up_writer))
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer, self._count))
        finally:
            for w in (writer, up_writer):
                self._open.discard(w)
                w.transport.abort()

    def _count(self, data: bytes) -> None:
        self.received += len(data)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, note: Any = None) -> None:
    with contextlib.suppress(ConnectionError, OSError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            if note is not None:
                note(data)
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(Exception):
        writer.transport.abort()
