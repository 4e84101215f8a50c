"""``aim-engine artifact download`` and ``check-size`` show how far they are: a bar with sizes,
rate and time left on a terminal, plain log lines when piped (a Job's log)."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from aim_core.cli.progress import TransferProgress, human_bytes
from tests.cliprocess import cli

SIZE = 50_000_000


def simulated(tmp_path: Path) -> dict[str, str]:
    """A download the downloader only plays (no source is asked): AIM_DEBUG_SIMULATE_DOWNLOAD."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH")}
    return {
        **keep,
        "HOME": str(tmp_path),
        "TARGET_DIR": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path / "tmp"),
        "HF_HOME": str(tmp_path / "hf"),
        "AIM_DEBUG_SIMULATE_DOWNLOAD": "true",
        "AIM_DEBUG_DOWNLOAD_DURATION": "2",
        "AIM_DEBUG_VERIFY_DURATION": "0.1",
        "EXPECTED_SIZE_BYTES": str(SIZE),
        "PROGRESS_INTERVAL": "0.2",
        "AIM_DOWNLOADER_PROTOCOL": "HTTP",
        "TERM": "xterm",
        "COLUMNS": "120",
    }


def test_a_piped_download_logs_plain_progress_lines(tmp_path):
    done = cli("artifact", "download", "hf://org/llama", env=simulated(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stderr  # no escape codes in a log
    assert re.search(r"INFO downloading hf://org/llama: 0 B of 47\.7 MiB \(0%\)", done.stderr), done.stderr


def test_a_download_on_a_terminal_shows_a_bar_with_sizes_rate_and_time_left(tmp_path):
    main, side = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "aim_core.cli", "artifact", "download", "hf://org/llama"],
        env=simulated(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=side,
    )
    os.close(side)
    shown = b""
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            shown += chunk
    finally:
        assert proc.wait(timeout=60) == 0
        os.close(main)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace"))
    # sizes done of the total, the rate, the time left (how far it got before the last redraw depends on the
    # machine's load; a rate needs two measurements)
    assert re.search(r"downloading hf://org/llama .*[\d.]+/47\.7 MiB +(\d+(\.\d+)? [kMG]?B/s|\?) ", text), text[-2000:]
    assert re.search(r"MiB .*(\d:\d\d:\d\d|-:--:--)", text)


def test_the_plain_line_says_sizes_share_rate_and_time_left():
    now = [0.0]
    progress = TransferProgress("downloading s3://b/m", clock=lambda: now[0])
    progress._first = (0.0, 0)
    assert progress.line(0, 10 * 2**30, 0.0) == "downloading s3://b/m: 0 B of 10.0 GiB (0%)"
    assert progress.line(2**30, 10 * 2**30, 10.0) == (
        "downloading s3://b/m: 1.0 GiB of 10.0 GiB (10%), 102.4 MiB/s, about 2 min left"
    )
    assert progress.line(9 * 2**30, 10 * 2**30, 90.0).endswith("about 10 s left")
    assert human_bytes(512) == "512 B" and human_bytes(1536) == "1.5 KiB"


@pytest.mark.parametrize("uri", ["hf://org/llama"])
def test_check_size_prints_its_line_and_nothing_else_on_stdout(tmp_path, uri):
    done = cli("artifact", "check-size", uri, env=simulated(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f'{{"url": "{uri}", "sizeBytes": {SIZE}}}\n'
    assert "\x1b[" not in done.stderr  # the spinner only on a terminal
