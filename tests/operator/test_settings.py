"""Operator namespace resolution (F16)."""

from pathlib import Path

from aim_core.operator.settings import operator_namespace


def test_flag_then_env_then_service_account_file_then_default(monkeypatch, tmp_path: Path):
    sa = tmp_path / "namespace"
    monkeypatch.delenv("AIM_SYSTEM_NAMESPACE", raising=False)
    assert operator_namespace(sa_file=sa) == "aim-system"
    sa.write_text("from-pod\n")
    assert operator_namespace(sa_file=sa) == "from-pod"
    monkeypatch.setenv("AIM_SYSTEM_NAMESPACE", "from-env")
    assert operator_namespace(sa_file=sa) == "from-env"
    assert operator_namespace("from-flag", sa_file=sa) == "from-flag"
