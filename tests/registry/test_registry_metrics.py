"""Registry requests and failures show in the metrics, per registry host (a real registry on loopback)."""

import pytest

from aim_core import ImageReference, RegistryError, metrics
from aim_core.registry import fetch_image_info


@pytest.fixture()
def m():
    fresh = metrics.Metrics()
    token = metrics.activate(fresh)
    yield fresh
    metrics.deactivate(token)


def counted(m, family, **labels):
    return m.registry.get_sample_value(family, labels) or 0


async def test_requests_are_counted_by_code_and_failures_by_reason(
    m, plugins, oci_registry, registry_front, unique_repo
):
    front = registry_front(oci_registry)
    pushed = front.registry.push_image(unique_repo, "1.0", labels={"ok": "1"})
    front.clear()
    front.fail(r"/manifests/", 503, times=2)
    await fetch_image_info(plugins, ImageReference.parse(pushed.reference), None)
    host = front.host
    assert counted(m, "aim_registry_requests_total", host=host, method="GET", code="503") == 2
    assert counted(m, "aim_registry_requests_total", host=host, method="GET", code="200") >= 1
    assert counted(m, "aim_registry_failures_total", host=host, reason="ServiceUnavailable") == 0

    front.fail(r"/manifests/", 503, times=100)
    with pytest.raises(RegistryError):
        await fetch_image_info(plugins, ImageReference.parse(pushed.reference), None)
    assert counted(m, "aim_registry_failures_total", host=host, reason="ServiceUnavailable") == 1
    answered_503 = sum(
        counted(m, "aim_registry_requests_total", host=host, method=method, code="503") for method in ("GET", "HEAD")
    )
    assert answered_503 == 2 + 4  # the first try and AIM_ENGINE_REGISTRY_RETRIES=3 retries
