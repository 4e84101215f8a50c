"""The metrics server's certificate, loaded again when its files change (controller-runtime's certwatcher).

cert-manager renews the serving certificate long before it expires and rewrites the mounted Secret
(the kubelet swaps the volume's ``..data`` link, so both files change at once). controller-runtime's
``certwatcher`` reads the pair again when they change and serves every new TLS connection with the
new one; a certificate read once at start would expire under a long-running operator.

:class:`CertWatcher` does the same: it reads the certificate and key every :data:`POLL_SECONDS`
(controller-runtime polls every 10 s beside its file events), and when their bytes differ from
what it loaded and the new pair loads (a certificate with its own key), it loads them into the
live :class:`ssl.SSLContext`: connections made from then on present the new certificate, open ones
keep theirs. A pair caught half-written, or a key that does not match, is logged and the old pair
stays until the next read finds a good one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable

log = logging.getLogger("aim_engine.metrics")

POLL_SECONDS = 10.0


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


class CertWatcher:
    """A server :class:`ssl.SSLContext` whose certificate follows the files ``cert_path`` and ``key_path``."""

    def __init__(
        self,
        cert_path: str,
        key_path: str,
        *,
        make_context: Callable[[], ssl.SSLContext] | None = None,
        poll_seconds: float | None = None,
    ) -> None:
        self.cert_path = cert_path
        self.key_path = key_path
        self.poll_seconds = POLL_SECONDS if poll_seconds is None else poll_seconds
        self._make = make_context or (lambda: ssl.create_default_context(ssl.Purpose.CLIENT_AUTH))
        self.context = self._make()
        self.reloads = 0  # how many times a changed pair was loaded (the first load not counted)
        self._loaded: tuple[bytes, bytes] | None = None
        self._task: asyncio.Task[None] | None = None
        self.context.load_cert_chain(cert_path, key_path)  # at start a bad pair is an error the caller reports
        self._loaded = (_read(cert_path), _read(key_path))

    def check(self) -> bool:
        """Load the pair again if the files changed and the new pair is usable; whether it was loaded."""
        try:
            current = (_read(self.cert_path), _read(self.key_path))
        except OSError as exc:
            log.warning("cannot read the metrics certificate %s again: %s; serving the one loaded", self.cert_path, exc)
            return False
        if current == self._loaded:
            return False
        try:
            self._make().load_cert_chain(self.cert_path, self.key_path)  # a trial first: the live one stays whole
            self.context.load_cert_chain(self.cert_path, self.key_path)
        except (OSError, ssl.SSLError, ValueError) as exc:
            log.warning(
                "the metrics certificate %s changed but cannot be loaded: %s; serving the one loaded until it can",
                self.cert_path,
                exc,
            )
            return False
        self._loaded = current
        self.reloads += 1
        log.info("loaded the changed metrics certificate %s", self.cert_path)
        return True

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            self.check()  # two small files; on the loop, so no handshake meets a context half-loaded

    def start(self) -> None:
        """Check the files every :attr:`poll_seconds` on the running loop, until :meth:`stop`."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch(), name="metrics-certwatcher")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
