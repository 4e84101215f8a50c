"""A third-party GPU vendor for the core's tests: the gpu_acme example plugin, imported from its source.

The plugin lives in ``examples/plugins/gpu_acme`` (an installable distribution,
documented in docs/plugins.md). Tests of the core import it from there without
installing it, so it registers only where a test registers it, and the example
is exercised by every test that uses it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "gpu_acme"
PACKAGE = "aim_example_gpu_acme"


def _package() -> ModuleType:
    """The example's package, from the source tree (not from any installed copy)."""
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            PACKAGE, EXAMPLE / PACKAGE / "__init__.py", submodule_search_locations=[str(EXAMPLE / PACKAGE)]
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    return sys.modules[PACKAGE]


def acme_plugin() -> ModuleType:
    """The module the plugin's entry point names, to register with a plugin manager."""
    _package()
    return importlib.import_module(f"{PACKAGE}.plugin")


_package()
AcmeVendor = importlib.import_module(f"{PACKAGE}.vendor").AcmeGpuVendor


def acme_node(model: str = "x9", count: int = 4) -> dict[str, Any]:
    """A Node with ``count`` Acme accelerators of product ``model``, as Acme's device plugin labels it."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "acme-1",
            "labels": {"acme.example/accel.model": model, "acme.example/accel.count": str(count)},
        },
        "status": {"allocatable": {"acme.example/accel": str(count)}},
    }
