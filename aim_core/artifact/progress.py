"""Reading what the helper containers report: the size line and the download state (F70, F75). Pure."""

from __future__ import annotations

import json
from typing import Any

from aim_core.reconcile.health import Health, State
from aim_core.reconcile.obj import Obj

MAX_DISCOVERED_BYTES = 2**50  # a size check claiming more is not believed (F70)
DOWNLOAD_COMPLETE = "DownloadComplete"


def _result_line(lines: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The size check's result: the last line that is a JSON object with ``sizeBytes``, wherever it stands."""
    for line in reversed(lines):
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and "sizeBytes" in data:
            return line, data
    return None


def parse_check_size(log: str) -> tuple[int | None, str]:
    """``(bytes, problem)`` from a size-check log: the result line ``{"url": "<uri>", "sizeBytes": N}`` with
    ``0 < N <= 2**50``.

    The check prints its result on stdout and its progress on stderr; a container log interleaves the two in no
    fixed order, so the result is the last line that is a JSON object with ``sizeBytes``, wherever it stands
    (issue 18: reading only the last line lost the answer about half the time on real clusters).
    """
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    if not lines:
        return None, 'the size check printed nothing; it must print a line {"url": ..., "sizeBytes": N}'
    result = _result_line(lines)
    if result is None:
        last = lines[-1]
        shown = last if len(last) <= 200 else last[:197] + "..."
        return None, f'the size check printed no result line {{"url": ..., "sizeBytes": N}} (not JSON: {shown})'
    line, data = result
    shown = line if len(line) <= 200 else line[:197] + "..."
    size = data.get("sizeBytes")
    if isinstance(size, bool) or not isinstance(size, int):
        return None, f"the result line of the size check has no integer sizeBytes: {shown}"
    if not 0 < size <= MAX_DISCOVERED_BYTES:
        return None, f"the size check reported {size} bytes; a size must be above 0 and at most 2^50"
    return size, ""


def parse_check_adapter(log: str) -> dict[str, Any] | None:
    """The ``adapter`` object of the size-check line (a LoRA adapter's config, issue 22), if any."""
    result = _result_line([line.strip() for line in log.splitlines() if line.strip()])
    adapter = result[1].get("adapter") if result is not None else None
    if not isinstance(adapter, dict):
        return None
    keep = {"baseModel": str, "rank": int, "alpha": int, "problem": str}
    return {
        k: v for k, v in adapter.items() if k in keep and isinstance(v, keep[k]) and not isinstance(v, bool)
    } or None


def discovered_size(status: Obj) -> int | None:
    """``status.discoveredSizeBytes`` when it is a believable size."""
    value = status.get("discoveredSizeBytes")
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_DISCOVERED_BYTES:
        return value
    return None


def _condition(status: Obj, type_: str) -> Obj | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == type_), None)


def was_downloaded(status: Obj) -> bool:
    """Whether an earlier reconcile saw the download Job succeed (Ready and ``DownloadComplete`` Verified)."""
    cond = _condition(status, DOWNLOAD_COMPLETE) or {}
    return (
        status.get("status") == State.READY.value and cond.get("status") == "True" and cond.get("reason") == "Verified"
    )


def download_condition(reason: str, message: str) -> dict[str, Any]:
    status = "True" if reason in ("Verified", "Verifying") else "False"
    return {"type": DOWNLOAD_COMPLETE, "status": status, "reason": reason, "message": message}


def download_phase(status: Obj, job: Health, pods: Health | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(DownloadComplete condition, status fields)`` while a download Job exists (F75).

    Job succeeded -> True ``Verified``, progress forced to 100 % and
    ``download.message`` "Complete"; Job or pod failed -> False
    ``VerificationFailed`` when progress had reached 100, else ``Downloading``,
    progress shown as "N/A"; progress at 100 while running -> True
    ``Verifying``; otherwise False ``Downloading``.
    """
    progress = dict(status.get("progress") or {})
    percent = progress.get("percentage")
    fields: dict[str, Any] = {}
    if job.ready:
        progress.update({"percentage": 100, "displayPercentage": "100 %"})
        fields["progress"] = progress
        fields["download"] = {**(status.get("download") or {}), "message": "Complete"}
        return download_condition("Verified", "the download finished and was verified"), fields
    failed = job.state is State.FAILED or (pods is not None and pods.state is State.FAILED)
    if failed:
        progress["displayPercentage"] = "N/A"
        fields["progress"] = progress
        why = (pods if pods is not None and pods.state is State.FAILED else job).message
        if percent == 100:
            return download_condition("VerificationFailed", f"verification failed: {why}"), fields
        return download_condition("Downloading", f"the download failed: {why}"), fields
    if percent == 100:
        return download_condition("Verifying", "all bytes are there; verifying the files"), fields
    shown = progress.get("displayPercentage") or "0 %"
    return download_condition("Downloading", f"downloading ({shown})"), fields
