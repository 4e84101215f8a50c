"""Progress for people, on stderr: a spinner while something runs, a transfer's bar, plain lines when piped."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["TransferProgress", "human_bytes", "stderr_progress"]


@contextlib.contextmanager
def stderr_progress(description: str, total: float | None = None) -> Iterator[Callable[..., None]]:
    """A progress display on stderr while the block runs, only when stderr is a terminal.

    Yields ``step(text=None, advance=1)``: names what is being done now and
    counts one more done. When stderr is piped or redirected it does nothing.
    """
    if not sys.stderr.isatty():
        yield lambda *args, **kwargs: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    else:
        columns += [TimeElapsedColumn()]
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as progress:
        task = progress.add_task(description, total=total)

        def step(text: str | None = None, advance: float = 1) -> None:
            progress.update(task, description=f"{description}: {text}" if text else description, advance=advance)

        yield step


def human_bytes(n: float) -> str:
    """``1.5 GiB``: binary units, as the artifacts' sizes are shown."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


class TransferProgress:
    """How far a transfer is, for people: a bar with sizes, rate and time left on a terminal (stderr);
    when stderr is piped (a Job's log), a plain log line at most every ``every`` seconds.

    ``update(done_bytes, total_bytes, finished)`` is called from any thread.
    """

    def __init__(self, description: str, *, every: float = 5.0, clock: Callable[[], float] | None = None) -> None:
        import threading
        import time

        self.description = description
        self.every = every
        self.clock = clock or time.monotonic
        self.terminal = sys.stderr.isatty()
        self._lock = threading.Lock()
        self._progress: Any = None
        self._task: Any = None
        self._start = self.clock()
        self._last_line = float("-inf")
        self._first: tuple[float, int] | None = None

    def __enter__(self) -> TransferProgress:
        if self.terminal:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(binary_units=True),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=Console(file=sys.stderr),
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=None)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, done: int, total: int, finished: bool = False) -> None:
        with self._lock:
            if self._progress is not None:
                self._progress.update(self._task, completed=done, total=total or None)
                return
            now = self.clock()
            if self._first is None:
                self._first = (now, done)
            if not finished and now - self._last_line < self.every:
                return
            self._last_line = now
            # the downloader's log (a Job's log when piped): same format as its other lines
            logging.getLogger("aim.downloader").info("%s", self.line(done, total, now))

    def line(self, done: int, total: int, now: float) -> str:
        """``downloading: 1.2 GiB of 15.3 GiB (8%), 110.0 MiB/s, about 2 min left``."""
        start, base = self._first or (self._start, 0)
        elapsed = now - start
        rate = (done - base) / elapsed if elapsed > 0 and done > base else 0.0
        text = f"{self.description}: {human_bytes(done)}"
        if total:
            text += f" of {human_bytes(total)} ({100 * done // total}%)"
        if rate > 0:
            text += f", {human_bytes(rate)}/s"
            if total and done < total:
                left = (total - done) / rate
                text += f", about {left / 60:.0f} min left" if left >= 90 else f", about {left:.0f} s left"
        return text
