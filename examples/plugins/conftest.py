"""The example plugins, installed once per test session into a folder of their own.

``example_plugins`` puts that folder on ``sys.path`` for one test, so the
plugins are found through their entry points exactly as in an operator image,
and no other test ever sees them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aim_testing.plugins import install_plugin, plugins_on_path

HERE = Path(__file__).resolve().parent
EXAMPLES = {"gpu_acme": "aim_example_gpu_acme", "registry_harbor": "aim_example_registry_harbor"}


@pytest.fixture(scope="session")
def example_site(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("example-plugins") / "site"
    for folder in EXAMPLES:
        install_plugin(HERE / folder, target)
    return target


@pytest.fixture
def example_plugins(example_site):
    with plugins_on_path(example_site, *EXAMPLES.values()):
        yield example_site
