"""The two commands: ``download`` (supervise attempts, report, verify) and ``check-size``.

``download`` lists the source once, then runs one child process per protocol of
``AIM_DOWNLOADER_PROTOCOL`` until one succeeds, patching ``status.download`` before and
after each attempt and ``status.progress`` from the monitor. A stall ends the attempt;
an authorization or not-found failure ends the sequence (another protocol cannot fix
it). Partial Hub files are removed before each attempt (huggingface_hub names them per
process, so they can never be continued), completed files stay; partial S3 files are
continued. Progress goes to 100 % when the transfer ended (as upstream), then the files
are verified.

Once verified, the target holds exactly the files of the source: the bookkeeping that
made resumption possible (huggingface_hub's ``.cache/huggingface`` metadata, our S3
records under ``.cache/aim-downloader``) is removed, so a model downloaded from the Hub,
copied as it is to a bucket and downloaded again from there gives the same tree, file
for file. A file of the source that happens to live there is kept.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from aim_core.downloader.adapters import adapter_status, fetch_adapter_config
from aim_core.downloader.bookkeeping import remove_bookkeeping
from aim_core.downloader.config import Settings, flag
from aim_core.downloader.monitor import Monitor, folder_bytes
from aim_core.downloader.simulate import ATTEMPT_PROTOCOL_ENV, Simulation
from aim_core.downloader.sources import DownloadError, Failure, Manifest, Source
from aim_core.downloader.status import StatusReporter, download_status, progress_status
from aim_core.downloader.tls import trust_env

log = logging.getLogger("aim.downloader")

HF_DOWNLOADS = Path(".cache") / "huggingface" / "download"  # where huggingface_hub keeps partial files


def _setup_logging() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    for noisy in ("httpx", "httpx2", "botocore", "boto3", "urllib3", "huggingface_hub", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def list_source(source: Source, settings: Settings) -> Manifest:
    if source.scheme == "hf":
        from aim_core.downloader import hub

        return hub.list_repo(source, settings.download_filter)
    from aim_core.downloader import s3

    return s3.list_objects(source, settings.download_filter)


# --------------------------------------------------------------------------- check-size


def check_size(uri: str) -> int:
    """Print ``{"url": uri, "sizeBytes": N}`` as the last line; exit code per :class:`Failure`."""
    _setup_logging()
    try:
        settings = Settings.from_env()
        source = Source.parse(uri)
        trust_env(os.environ, settings.tmp_dir)
        simulation = Simulation.from_env(os.environ, source)
        manifest = simulation.manifest(source, settings.expected_size) if simulation else list_source(source, settings)
        size = manifest.total_bytes
        if size <= 0:
            raise DownloadError(
                Failure.NOT_FOUND,
                f"nothing to download at {uri}: {len(manifest.files)} file(s) "
                f"after the filter ({settings.download_filter.describe()})",
            )
        log.info(
            "%s: %d file(s), %d bytes (filter: %s)", uri, len(manifest.files), size, settings.download_filter.describe()
        )
    except DownloadError as exc:
        log.error("%s", exc)
        return exc.kind.value
    line: dict[str, Any] = {"url": uri, "sizeBytes": size}
    adapter = None if simulation else fetch_adapter_config(manifest, settings.tmp_dir)
    if adapter is not None:  # a LoRA adapter: known before the download (issue 22)
        line["adapter"] = adapter
    sys.stderr.flush()
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    return 0


# --------------------------------------------------------------------------- download


class _Child:
    """The running attempt: started, stopped on a stall or a signal, its last error line kept."""

    def __init__(self, on_ready: Callable[[], None] | None = None) -> None:
        self.on_ready = on_ready
        self.process: subprocess.Popen[bytes] | None = None
        self.last_error = ""
        self.stalled = False
        self._lock = threading.Lock()

    def run(self, manifest_file: Path, target: Path, env: dict[str, str]) -> int:
        from aim_core.downloader.attempt import ERROR_PREFIX, READY_LINE

        self.stalled = False
        self.last_error = ""
        with self._lock:
            self.process = subprocess.Popen(  # noqa: S603 - our own module, fixed arguments
                [sys.executable, "-m", "aim_core.downloader.attempt", str(manifest_file), str(target)],
                env=env,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
        assert self.process.stderr is not None
        for raw in self.process.stderr:  # pass through, keep the error line
            line = raw.decode(errors="replace")
            if line.rstrip("\n") == READY_LINE:
                if self.on_ready is not None:
                    self.on_ready()
                continue
            sys.stderr.write(line)
            if line.startswith(ERROR_PREFIX):
                self.last_error = line[len(ERROR_PREFIX) :].strip()
        sys.stderr.flush()
        return self.process.wait()

    def stop(self) -> None:
        with self._lock:
            process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()

    def stall(self) -> None:
        self.stalled = True
        self.stop()


def download(uri: str, target_dir: str | None = None) -> int:
    _setup_logging()
    try:
        settings = Settings.from_env()
    except DownloadError as exc:
        log.error("%s", exc)
        return exc.kind.value
    if target_dir is not None:
        settings = attrs.evolve(settings, target_dir=target_dir)
    reporter = StatusReporter.from_settings(settings)
    try:
        return _download(uri, settings, reporter)
    finally:
        reporter.close()


def storage_initializer(args: list[str]) -> int:
    """KServe's storage-initializer contract: ``<source> <destination>`` pairs, each downloaded in turn.

    With this entrypoint the downloader image can serve as the storage initializer of
    a KServe ClusterStorageContainer for ``hf://`` and ``s3://`` storage URIs (see
    docs/downloader.md). Status reporting stays off unless ``ARTIFACT_NAME`` is set.
    """
    if not args or len(args) % 2:
        _setup_logging()
        log.error("expected <source-uri> <destination> pairs, got %d argument(s)", len(args))
        return Failure.INVALID.value
    for source, destination in zip(args[::2], args[1::2]):
        code = download(source, destination)
        if code:
            return code
    return 0


def _download(uri: str, settings: Settings, reporter: StatusReporter) -> int:
    sequence = settings.sequence
    first = sequence[0]
    target = Path(settings.target_dir)
    try:
        source = Source.parse(uri)
        if source.scheme == "s3":
            sequence = ("S3",)
            first = "S3"
        trust_env(os.environ, settings.tmp_dir)
        simulation = Simulation.from_env(os.environ, source)
        reporter.patch(download_status(first, 1, len(sequence), sequence, f"Listing files of {uri}"))
        if simulation:
            log.warning("simulating the download of %s (AIM_DEBUG_SIMULATE_*): nothing is fetched", uri)
            manifest = simulation.manifest(source, settings.expected_size)
        else:
            manifest = list_source(source, settings)
        if not manifest.files:
            raise DownloadError(
                Failure.NOT_FOUND,
                f"nothing to download at {uri}: no file passes the filter ({settings.download_filter.describe()})",
            )
        target.mkdir(parents=True, exist_ok=True)
        if not simulation:  # the simulated file is sparse
            _check_space(target, manifest)
    except DownloadError as exc:
        return _fail(reporter, first, 1, len(sequence), sequence, exc)
    log.info(
        "%s: %d file(s), %d bytes into %s (filter: %s)",
        uri,
        len(manifest.files),
        manifest.total_bytes,
        target,
        settings.download_filter.describe(),
    )

    child = _Child()
    xet_cache = Path(os.environ.get("HF_XET_CACHE") or Path(os.environ.get("HF_HOME", "/tmp/.hf")) / "xet")
    monitor = Monitor(
        reporter,
        manifest.total_bytes,
        settings.progress_interval,
        settings.stall_timeout,
        measure=lambda: folder_bytes(target),
        activity=lambda: folder_bytes(target) + folder_bytes(xet_cache),
        on_stall=child.stall,
    )
    child.on_ready = monitor.attempt_ready
    previous = _forward_signals(child)
    workdir = Path(tempfile.mkdtemp(prefix="aim-downloader-", dir=settings.tmp_dir))
    manifest_file = workdir / "manifest.json"
    manifest_file.write_text(manifest.to_json())
    monitor.report(force=True)
    monitor.start()
    failure: DownloadError | None = None
    try:
        for attempt, protocol in enumerate(sequence, start=1):
            if source.scheme == "hf":
                _remove_partial(target / HF_DOWNLOADS)  # unique per process: never resumed, only in the way
            monitor.new_attempt()
            reporter.patch(
                download_status(
                    protocol,
                    attempt,
                    len(sequence),
                    sequence,
                    f"Downloading with {protocol} (attempt {attempt}/{len(sequence)})",
                )
            )
            log.info("attempt %d/%d with %s", attempt, len(sequence), protocol)
            started = time.monotonic()
            code = child.run(manifest_file, target, _attempt_env(protocol, settings))
            if code == 0:
                log.info(
                    "attempt %d/%d with %s succeeded in %.3f s",
                    attempt,
                    len(sequence),
                    protocol,
                    time.monotonic() - started,
                )
                failure = None
                break
            failure = _attempt_failure(code, child, settings)
            log.error("attempt %d/%d with %s failed: %s", attempt, len(sequence), protocol, failure)
            reporter.patch(
                download_status(
                    protocol,
                    attempt,
                    len(sequence),
                    sequence,
                    f"Attempt {attempt}/{len(sequence)} with {protocol} failed: {failure}",
                )
            )
            if failure.kind.permanent or code in (-signal.SIGTERM, 143) and not child.stalled:
                break
    finally:
        monitor.stop()
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(workdir, ignore_errors=True)
    if failure is not None:
        monitor.report(force=True)
        return _fail(reporter, protocol, attempt, len(sequence), sequence, failure)

    # As upstream: 100 % when the transfer ended, then verification (the operator shows Verifying,
    # and a failure from here on is VerificationFailed).
    reporter.patch(progress_status(manifest.total_bytes, manifest.total_bytes, done=True))
    reporter.patch(
        download_status(
            protocol, attempt, len(sequence), sequence, f"Verifying {len(manifest.files)} file(s) ({settings.verify})"
        )
    )
    try:
        checked = simulation.verify(manifest, target) if simulation else _verify(manifest, target, settings)
    except DownloadError as exc:
        return _fail(reporter, protocol, attempt, len(sequence), sequence, exc)
    if not simulation:
        remove_bookkeeping(target, manifest)
    adapter = None if simulation else adapter_status(target)
    if adapter is not None:  # a LoRA adapter: the operator checks its base model and rank (issue 22)
        log.info("LoRA adapter: %s", json.dumps(adapter["adapter"], sort_keys=True))
        reporter.patch(adapter)
    reporter.patch(
        download_status(
            protocol,
            attempt,
            len(sequence),
            sequence,
            f"Complete: {checked} file(s), {manifest.total_bytes} bytes verified",
        )
    )
    log.info("done: %d file(s), %d bytes verified in %s", checked, manifest.total_bytes, target)
    return 0


def _verify(manifest: Manifest, target: Path, settings: Settings) -> int:
    from aim_core.downloader.verify import verify

    if flag(os.environ, "AIM_DEBUG_VERIFY_FAIL"):
        raise DownloadError(Failure.VERIFICATION, "verification failed on purpose (AIM_DEBUG_VERIFY_FAIL)")
    return verify(manifest, target, settings.verify)


def _attempt_env(protocol: str, settings: Settings) -> dict[str, str]:
    from aim_core.downloader.hub import DROPPED_ENV, PROTOCOL_ENV

    env = dict(os.environ)
    for name in DROPPED_ENV:
        env.pop(name, None)
    env.update(PROTOCOL_ENV.get(protocol, {}))
    env["AIM_DOWNLOADER_WORKERS"] = str(settings.workers)
    env[ATTEMPT_PROTOCOL_ENV] = protocol
    env["AIM_DOWNLOADER_PARENT_PID"] = str(os.getpid())
    env.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    env.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return env


def _attempt_failure(code: int, child: _Child, settings: Settings) -> DownloadError:
    if child.stalled:
        return DownloadError(
            Failure.STALLED,
            f"stalled: no new bytes for {settings.stall_timeout:g} s (STALL_TIMEOUT); the attempt was stopped",
        )
    try:
        kind = Failure(code)
    except ValueError:
        kind = Failure.OTHER
    return DownloadError(kind, child.last_error or f"the transfer process ended with exit code {code}")


def _fail(
    reporter: StatusReporter, protocol: str, attempt: int, total: int, sequence: tuple[str, ...], exc: DownloadError
) -> int:
    log.error("%s", exc)
    reporter.patch(download_status(protocol, attempt, total, sequence, f"Failed: {exc}"))
    return exc.kind.value


def _check_space(target: Path, manifest: Manifest) -> None:
    try:
        usage = shutil.disk_usage(target)
    except OSError:
        return
    needed = manifest.total_bytes - folder_bytes(target)
    if needed > usage.free:
        raise DownloadError(
            Failure.NO_SPACE,
            f"no space left on device for {manifest.source.uri}: "
            f"{needed} more bytes needed, {usage.free} free in {target}",
        )


def _remove_partial(target: Path) -> None:
    for partial in target.rglob("*.incomplete"):
        try:
            partial.unlink()
        except OSError:
            pass


def _forward_signals(child: _Child) -> Any:
    def handler(signum: int, frame: Any) -> None:
        log.warning("signal %d: stopping the transfer", signum)
        child.stop()

    return signal.signal(signal.SIGTERM, handler)
