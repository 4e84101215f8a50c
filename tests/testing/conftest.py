"""The emulator's own tests write into namespaces they do not make (``ns``, ``ns1``, ...).

What they pin is something else (apply, patches, watches, the stored form, ...), so their emulator
creates in any namespace. Refusing a create in a namespace that does not exist (404, as kube-apiserver)
is pinned on both backends by ``tests/wire/test_namespace_deletion_wire.py``.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _any_namespace(request: pytest.FixtureRequest) -> None:
    if "kube" in request.fixturenames:
        request.getfixturevalue("kube").emulator.namespaces_required = False
