"""A TCP proxy on 127.0.0.1 that can stop passing bytes, to interrupt or stall a transfer on cue.

Put it in front of any local server (moto's S3, the fake Hub): ``proxy.limit(n)`` lets
``n`` more response bytes through (over all connections) and then holds the rest until
``proxy.release()``; :attr:`Proxy.received` counts the response bytes passed, so a test
can tell how much a resumed download fetched.
"""

from __future__ import annotations

import socket
import threading


class Proxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.received = 0
        self._budget: int | None = None
        self._cond = threading.Condition()
        self._closing = False
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def limit(self, more_bytes: int) -> None:
        with self._cond:
            self._budget = more_bytes
            self._cond.notify_all()

    def release(self) -> None:
        with self._cond:
            self._budget = None
            self._cond.notify_all()

    def reset_count(self) -> None:
        with self._cond:
            self.received = 0

    def __enter__(self) -> Proxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._closing = True
            self._budget = None
            self._cond.notify_all()
        self._listener.close()
        for sock in list(self._sockets):
            try:
                sock.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, response: bool) -> None:
        try:
            while data := src.recv(65536):
                while response and data:  # hold what the budget does not allow yet
                    piece = self._take(data)
                    dst.sendall(piece)
                    data = data[len(piece) :]
                if data:
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _take(self, data: bytes) -> bytes:
        """Wait until the budget allows some of ``data``; count and return the part that may pass."""
        with self._cond:
            while self._budget is not None and self._budget <= 0 and not self._closing:
                self._cond.wait()
            if self._budget is not None:
                data = data[: self._budget]
                self._budget -= len(data)
            self.received += len(data)
            return data
