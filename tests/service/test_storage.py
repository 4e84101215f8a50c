"""A service's spec.storage.pvcHeadroomPercent and downloadFilter are carried to the template cache it creates
(issue 20); the cache passes them to its artifacts (tests/templatecache/test_cache_storage.py)."""

from __future__ import annotations

import pytest

from tests.service.builders import QWEN, one, qwen_model, qwen_template, run, service


@pytest.mark.parametrize("mode", ["Dedicated", "Shared"])
def test_the_services_storage_settings_go_to_the_cache_it_creates(mode: str) -> None:
    svc = service("chat").model_name(QWEN).caching(mode)
    svc["spec"]["storage"] = {"pvcHeadroomPercent": 30, "downloadFilter": {"exclude": ["original/*"]}}
    plan, _ = run(svc, qwen_model(), qwen_template())
    spec = one(plan, "AIMTemplateCache")["spec"]
    assert spec["pvcHeadroomPercent"] == 30 and spec["downloadFilter"] == {"exclude": ["original/*"]}


def test_without_storage_settings_the_cache_has_none() -> None:
    svc = service("chat").model_name(QWEN)
    plan, _ = run(svc, qwen_model(), qwen_template())
    spec = one(plan, "AIMTemplateCache")["spec"]
    assert "pvcHeadroomPercent" not in spec and "downloadFilter" not in spec
