"""LoRA adapters: what a downloaded ``adapter_config.json`` says (issue 22).

A PEFT LoRA adapter carries ``adapter_config.json`` beside its weights, with
the base model it was trained on (``base_model_name_or_path``) and its rank
(``r``). When the downloaded files hold one at the top level, the downloader
reports it on the artifact as ``status.adapter`` (the size check already
prints it in its output line, so a mismatch shows before the download) (``baseModel``, ``rank``,
``alpha``, or ``problem`` when the file cannot be used), and the operator
checks it against the service's model and rank limit. Files without one
report nothing: a model's weights are not an adapter.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from aim_core.downloader.sources import Manifest

log = logging.getLogger("aim.downloader")

CONFIG_FILE = "adapter_config.json"
MAX_CONFIG_BYTES = 1 << 20


def has_adapter_config(manifest: Manifest) -> bool:
    return any(f.path == CONFIG_FILE for f in manifest.files)


def parse_adapter_config(text: str) -> dict[str, Any]:
    """``status.adapter`` from the text of an ``adapter_config.json``."""
    try:
        config = json.loads(text)
    except ValueError as exc:
        return {"problem": f"{CONFIG_FILE} is not valid JSON ({exc})"}
    if not isinstance(config, dict):
        return {"problem": f"{CONFIG_FILE} is not a JSON object"}
    peft = config.get("peft_type")
    if peft is not None and str(peft).upper() != "LORA":
        return {"problem": f"{CONFIG_FILE} is for a {peft} adapter; only LoRA adapters are served"}
    rank = config.get("r")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank <= 0:
        return {"problem": f"{CONFIG_FILE} has no positive integer rank r (got {rank!r})"}
    info: dict[str, Any] = {"rank": rank}
    base = config.get("base_model_name_or_path")
    if isinstance(base, str) and base.strip():
        info["baseModel"] = base.strip()[:512]
    alpha = config.get("lora_alpha")
    if isinstance(alpha, int) and not isinstance(alpha, bool):
        info["alpha"] = alpha
    return info


def read_adapter_config(target: Path) -> dict[str, Any] | None:
    """``status.adapter`` for the files downloaded into ``target``; ``None`` when they are no adapter."""
    path = target / CONFIG_FILE
    if not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            return {"problem": f"{CONFIG_FILE} is larger than {MAX_CONFIG_BYTES} bytes"}
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return {"problem": f"cannot read {CONFIG_FILE}: {exc}"}
    return parse_adapter_config(text)


def adapter_status(target: Path) -> dict[str, Any] | None:
    """The status patch for an adapter downloaded into ``target`` (``None``: nothing to report)."""
    info = read_adapter_config(target)
    return None if info is None else {"adapter": info}


def fetch_adapter_config(manifest: Manifest, tmp_dir: str | None = None) -> dict[str, Any] | None:
    """``status.adapter`` for a listed source, reading only its ``adapter_config.json`` (for ``check-size``).

    ``None`` when the listing has none, or when it cannot be read now (the download reads it again).
    """
    found = next((f for f in manifest.files if f.path == CONFIG_FILE), None)
    if found is None:
        return None
    if found.size > MAX_CONFIG_BYTES:
        return {"problem": f"{CONFIG_FILE} is larger than {MAX_CONFIG_BYTES} bytes"}
    source = manifest.source
    try:
        if source.scheme == "s3":
            from aim_core.downloader import s3

            text = s3.client().get_object(Bucket=source.bucket, Key=found.key)["Body"].read().decode("utf-8")
        else:
            import tempfile

            from huggingface_hub import hf_hub_download

            with tempfile.TemporaryDirectory(dir=tmp_dir) as folder:
                path = hf_hub_download(
                    source.repo, CONFIG_FILE, revision=manifest.revision or source.revision, local_dir=folder
                )
                text = Path(path).read_text(encoding="utf-8")
    except Exception as exc:  # noqa: BLE001 - the size is what check-size must deliver; the download reads it again
        log.warning(
            "could not read %s of %s now (%s: %s); the download will", CONFIG_FILE, source.uri, type(exc).__name__, exc
        )
        return None
    return parse_adapter_config(text)
