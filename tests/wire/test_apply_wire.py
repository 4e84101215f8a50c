"""`aim-engine apply -f FILE --with-status --freeze` (F87) against the API: objects with their status, frozen."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aim_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = "aim.eai.amd.com/v1alpha1/aimclusterservicetemplates"
MODELS = "aim.eai.amd.com/v1alpha1/aimclustermodels"
NAME = "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd"


def namespace(kube) -> None:
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml-team"}})


async def test_apply_with_status_and_freeze_seeds_ready_objects(kube, kubeconfig, capsys, tmp_path):
    namespace(kube)
    files = [str(ROOT / "examples" / "models.yaml"), str(ROOT / "examples" / "templates.yaml")]
    args = ["apply", *sum((["-f", f] for f in files), []), "--with-status", "--freeze"]
    assert await asyncio.to_thread(main, args) == 0
    out = capsys.readouterr().out
    assert f"aimclusterservicetemplate/{NAME} applied, status written" in out
    template = kube.get(TEMPLATES, None, NAME)
    assert template["status"]["status"] == "Ready"
    assert template["metadata"]["annotations"]["aim.eai.amd.com/reconciliation-paused"] == "true"
    assert kube.get(MODELS, None, "qwen3-32b")["status"]["status"] == "Ready"


async def test_without_with_status_only_the_spec_is_applied(kube, kubeconfig, capsys):
    namespace(kube)
    assert await asyncio.to_thread(main, ["apply", "-f", str(ROOT / "examples" / "templates.yaml")]) == 0
    template = kube.get(TEMPLATES, None, NAME)
    assert (template.get("status") or {}).get("status") != "Ready"
    assert "aim.eai.amd.com/reconciliation-paused" not in (template["metadata"].get("annotations") or {})
    assert (
        await asyncio.to_thread(main, ["apply", "-f", str(ROOT / "examples" / "templates.yaml"), "--status-only"]) == 0
    )
    assert kube.get(TEMPLATES, None, NAME)["status"]["status"] == "Ready"


def test_kinds_it_cannot_apply_are_refused_before_anything_is_sent(tmp_path, capsys):
    (tmp_path / "x.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
    assert main(["apply", "-f", str(tmp_path / "x.yaml"), "--kubeconfig", str(tmp_path / "none")]) == 2
    assert "cannot apply apps/v1/Deployment" in capsys.readouterr().err
