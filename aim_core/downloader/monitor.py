"""Progress patches and stall detection, in a thread beside the transfer.

Progress is the size of the target folder (partial files included), as ``du`` would
report it to the upstream image, compared with the manifest's total. It is patched at
most once per ``PROGRESS_INTERVAL`` and only when it changed. When neither the folder
nor the Xet chunk cache grew for ``STALL_TIMEOUT`` seconds, ``on_stall`` is called once
per attempt (the supervisor then stops the attempt). The clock of an attempt starts when
its process says it is ready to transfer (:meth:`Monitor.attempt_ready`): starting a
Python process on a busy node is not a stalled network. Until then the attempt gets
``STALL_TIMEOUT`` plus :data:`STARTUP_ALLOWANCE`, so one that never starts is stopped too.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from aim_core.downloader.status import StatusReporter, progress_status

#: Seconds an attempt may take to start (imports, TLS set-up) on top of STALL_TIMEOUT.
STARTUP_ALLOWANCE = 60.0


def folder_bytes(root: Path) -> int:
    """Bytes in regular files below ``root`` (0 when it does not exist)."""
    total = 0
    stack = [str(root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return total


# Called with (bytes downloaded, bytes in all, done) on every measurement: the CLI's progress bar
# (`aim-engine artifact download` on a terminal) listens here; the Job's status patches do not need it.
LISTENERS: list[Callable[[int, int, bool], None]] = []


class Monitor:
    def __init__(
        self,
        reporter: StatusReporter,
        total: int,
        interval: float,
        stall_timeout: float,
        measure: Callable[[], int],
        activity: Callable[[], int] | None = None,
        on_stall: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.reporter, self.total = reporter, total
        self.interval, self.stall_timeout = interval, stall_timeout
        self.measure, self.activity = measure, activity or measure
        self.on_stall = on_stall
        self.clock = clock
        self.downloaded = 0
        self.stalled = False
        self._ready = True
        self._last_sent: tuple[int, int] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reset()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def new_attempt(self) -> None:
        """Restart the stall clock (each attempt gets the full STALL_TIMEOUT) and wait for it to start."""
        self._ready = False
        self._reset()

    def attempt_ready(self) -> None:
        """The attempt's process has started: STALL_TIMEOUT counts from now."""
        self._ready = True
        self._reset()

    def report(self, *, done: bool = False, force: bool = False) -> None:
        """Measure and patch now if the numbers changed (or ``force``)."""
        self.downloaded = min(self.measure(), self.total) if self.total else self.measure()
        if done:
            self.downloaded = self.total
        for listener in LISTENERS:
            listener(self.downloaded, self.total, done)
        patch = progress_status(self.downloaded, self.total, done=done)
        key = (patch["progress"]["percentage"], self.downloaded)
        if force or key != self._last_sent:
            if self.reporter.patch(patch) or not self.reporter.enabled:
                self._last_sent = key

    def _reset(self) -> None:
        self._level = self.activity()
        self._since = self.clock()
        self.stalled = False

    def check_stall(self) -> bool:
        level = self.activity()
        now = self.clock()
        if level > self._level:
            self._level, self._since = level, now
        elif not self.stalled and now - self._since >= self.stall_timeout + (0.0 if self._ready else STARTUP_ALLOWANCE):
            self.stalled = True
            if self.on_stall is not None:
                self.on_stall()
            return True
        return False

    def _run(self) -> None:
        tick = min(self.interval, 1.0)
        next_report = self.clock()
        while not self._stop.wait(tick):
            self.check_stall()
            if self.clock() >= next_report:
                self.report()
                next_report = self.clock() + self.interval
