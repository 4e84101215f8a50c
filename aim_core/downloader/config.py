"""Settings of the downloader, read once from the environment (names follow the upstream image)."""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from aim_core.downloader.filters import DownloadFilter
from aim_core.downloader.sources import DownloadError, Failure

PROTOCOLS = ("XET", "HF_TRANSFER", "HTTP")
DEFAULT_SERVICEACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
VERIFY_MODES = ("checksum", "size")


@attrs.frozen
class Settings:
    target_dir: str = "/cache"
    protocols: tuple[str, ...] = ()  # empty: one attempt with huggingface_hub's own defaults ("DEFAULT")
    progress_interval: float = 5.0
    stall_timeout: float = 120.0
    expected_size: int = 0
    artifact_name: str = ""
    artifact_namespace: str = ""
    serviceaccount_dir: str = DEFAULT_SERVICEACCOUNT_DIR
    download_filter: DownloadFilter = attrs.field(factory=DownloadFilter.default)
    verify: str = "checksum"
    workers: int = 8
    extra_ca_file: str = ""
    tmp_dir: str = "/tmp"

    @property
    def sequence(self) -> tuple[str, ...]:
        """The protocols to try, in order; ``("DEFAULT",)`` when none is configured."""
        return self.protocols or ("DEFAULT",)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        return cls(
            target_dir=env.get("TARGET_DIR") or env.get("MOUNT_PATH") or "/cache",
            protocols=parse_protocols(env.get("AIM_DOWNLOADER_PROTOCOL", "")),
            progress_interval=seconds(env, "PROGRESS_INTERVAL", 5.0),
            stall_timeout=seconds(env, "STALL_TIMEOUT", 120.0),
            expected_size=_int(env, "EXPECTED_SIZE_BYTES", 0),
            artifact_name=env.get("ARTIFACT_NAME", ""),
            artifact_namespace=env.get("ARTIFACT_NAMESPACE", ""),
            serviceaccount_dir=env.get("AIM_SERVICEACCOUNT_DIR") or DEFAULT_SERVICEACCOUNT_DIR,
            download_filter=_filter(env.get("AIM_DOWNLOAD_FILTER")),
            verify=_choice(env, "AIM_DOWNLOADER_VERIFY", VERIFY_MODES),
            workers=max(1, _int(env, "AIM_DOWNLOADER_WORKERS", 8)),
            extra_ca_file=env.get("AIM_DOWNLOADER_CA_FILE", ""),
            tmp_dir=env.get("TMPDIR") or "/tmp",
        )


def parse_protocols(text: str) -> tuple[str, ...]:
    """``"XET,HF_TRANSFER"`` -> ``("XET", "HF_TRANSFER")``; unknown names are an error, not skipped."""
    names = tuple(p.strip().upper() for p in text.split(",") if p.strip())
    unknown = [n for n in names if n not in PROTOCOLS]
    if unknown:
        raise DownloadError(
            Failure.INVALID,
            f"AIM_DOWNLOADER_PROTOCOL names unknown protocols {unknown}; "
            f"use a comma-separated list of {', '.join(PROTOCOLS)}",
        )
    return names


def _filter(text: str | None) -> DownloadFilter:
    try:
        return DownloadFilter.from_json(text)
    except ValueError as exc:
        raise DownloadError(Failure.INVALID, str(exc)) from None


def flag(env: Mapping[str, str], name: str) -> bool:
    """A switch such as ``AIM_DEBUG_VERIFY_FAIL``: on for ``1``, ``true``, ``yes`` or ``on``."""
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def seconds(env: Mapping[str, str], name: str, default: float, *, allow_zero: bool = False) -> float:
    """A duration in seconds (``"5"`` or ``"5s"``); garbage or a value out of range is an invalid setting."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw.removesuffix("s"))
    except ValueError:
        raise DownloadError(Failure.INVALID, f"{name}={raw!r} is not a number of seconds") from None
    if value < 0 or (value == 0 and not allow_zero):
        raise DownloadError(
            Failure.INVALID, f"{name}={raw!r} must be " + ("0 or more" if allow_zero else "greater than 0")
        )
    return value


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise DownloadError(Failure.INVALID, f"{name}={raw!r} is not an integer") from None
    if value < 0:
        raise DownloadError(Failure.INVALID, f"{name}={raw!r} must not be negative")
    return value


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    raw = env.get(name, "").strip().lower() or choices[0]
    if raw not in choices:
        raise DownloadError(Failure.INVALID, f"{name}={raw!r}; expected one of {', '.join(choices)}")
    return raw
