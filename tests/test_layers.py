"""Import layers: the contracts in ``.importlinter`` hold, and they can break.

``lint-imports`` checks the real tree. To prove each contract bites, the same
config is run over a scratch tree of empty packages with one seeded import
that the contract must catch. What import-linter cannot say (plugins import
only names in ``aim_core.__all__``) is an AST check here.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import aim_core

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".importlinter"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
KINDS = sorted(p.parent.name for p in ROOT.glob("aim_core/*/controller.py") if p.parent.name != "runtime")
PLUGIN_PACKAGES = sorted(p.parent for p in ROOT.glob("plugins/*/aim_plugin_*/__init__.py"))
EXAMPLE_PACKAGES = sorted(p.parent for p in ROOT.glob("examples/plugins/*/aim_example_*/__init__.py"))


def lint_imports(*args: str, cwd: Path = ROOT, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(CONFIG), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def config() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    return parser


def listed(section: str, key: str) -> set[str]:
    return set(config()[section][key].split())


def test_the_repository_keeps_every_layer_contract():
    result = lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken." in result.stdout


def test_every_plugin_package_is_under_the_plugin_contracts():
    packages = {p.name for p in PLUGIN_PACKAGES}
    assert packages, "no plugin packages found under plugins/"
    assert packages | {"aim_core"} <= listed("importlinter", "root_packages")
    assert packages <= listed("importlinter:contract:plugins-public-api", "source_modules")
    assert packages <= listed("importlinter:contract:core-without-plugins", "forbidden_modules")


def test_every_kind_may_import_other_kinds_only_through_their_package():
    assert {"service", "model", "template", "templatecache", "artifact", "modelsource", "runtimeconfig"} <= set(KINDS)
    for kind in KINDS:
        section = f"importlinter:contract:kind-{kind}"
        assert config()[section]["source_modules"].split() == [f"aim_core.{kind}"]
        assert listed(section, "forbidden_modules") == {f"aim_core.{k}.*" for k in KINDS if k != kind}
    assert listed("importlinter:contract:runtime-without-kinds", "forbidden_modules") == {
        f"aim_core.{k}" for k in KINDS
    }


# ---------------------------------------------------------------------------
# Each contract catches a seeded violation
# ---------------------------------------------------------------------------


SKELETON = [
    "aim_core/api/__init__.py",
    "aim_core/reconcile/__init__.py",
    "aim_core/operator/__init__.py",
    "aim_core/reconcile/health.py",
    "aim_core/plugin/__init__.py",
    "aim_core/plugin/providers.py",
    "aim_core/plugin/hookspecs.py",
    "aim_core/kube/__init__.py",
    "aim_core/runtime/__init__.py",
    "aim_core/template/scope.py",
    "aim_core/model/aggregate.py",
    "aim_core/runtimeconfig/resolution.py",
]


@pytest.fixture
def scratch(tmp_path: Path):
    """An empty copy of the package layout; ``write(path, source)`` seeds a module."""

    def write(path: str, source: str = "") -> None:
        file = tmp_path / path
        for parent in reversed(file.relative_to(tmp_path).parents[:-1]):
            init = tmp_path / parent / "__init__.py"
            init.parent.mkdir(parents=True, exist_ok=True)
            init.touch()
        file.write_text(source)

    for package in listed("importlinter", "root_packages"):
        write(f"{package}/__init__.py")
    for path in SKELETON:
        write(path)
    for section in config().sections():
        for key in ("source_modules", "forbidden_modules"):
            for module in config()[section].get(key, "").split():
                if "*" in module or not module.startswith("aim_core."):
                    continue
                path = module.replace(".", "/")
                write(f"{path}/__init__.py" if (ROOT / path).is_dir() else f"{path}.py")
    # The adapters doing what they may do must not break anything.
    write("aim_core/kube/client.py", "import aiohttp\nimport httpx\nimport kubernetes\n")
    write("aim_core/kube/__init__.py", "from aim_core.kube import client\n")
    write("aim_core/operator/run.py", "import kopf\nimport kubernetes\nfrom aim_core import kube\n")
    write(
        "aim_core/reconcile/plan.py", "from aim_core.reconcile import health\nfrom aim_core.plugin import providers\n"
    )
    write("aim_plugin_kserve/plugin.py", "from aim_core import hookimpl\n")
    # A kind may use another kind's package; a plan may use a kind's observed values.
    write("aim_core/service/plan.py", "from aim_core.template import Scope\nfrom aim_core.service import observed\n")
    write("aim_core/service/observed.py", "from aim_core.runtimeconfig import Resolution\n")
    write.root = tmp_path
    return write


def test_the_scratch_tree_keeps_every_contract(scratch):
    result = lint_imports(cwd=scratch.root, pythonpath=scratch.root)
    assert result.returncode == 0, result.stdout + result.stderr


VIOLATIONS = [
    ("pure", "aim_core/reconcile/observe.py", "import kubernetes\n"),
    ("pure", "aim_core/api/models.py", "import aiohttp\n"),
    ("pure", "aim_core/services/plan.py", "import httpx\n"),
    ("pure", "aim_core/reconcile/apply.py", "from aim_core import kube\n"),  # indirect: kube imports httpx
    ("pure", "aim_core/plugin/hookspecs.py", "import kopf\n"),
    ("kube-adapter", "aim_core/registry.py", "import httpx\n"),
    ("kube-adapter", "aim_core/operator/handlers.py", "import httpx\n"),
    ("kube-adapter", "aim_core/runtime/store.py", "from kubernetes import client\n"),
    ("kopf-adapter", "aim_core/runtime/controller.py", "import kopf\n"),
    ("kopf-adapter", "aim_core/kube/client.py", "import httpx\nimport kopf\n"),
    ("plugins-public-api", "aim_plugin_kserve/plugin.py", "from aim_core.plugin.providers import ResourceRef\n"),
    ("plugins-public-api", "aim_plugin_gpu_amd/vendor.py", "import aim_core.reconcile.health\n"),
    ("plugins-public-api", "aim_plugin_keda/plugin.py", "from aim_core import plugin\n"),
    ("core-without-plugins", "aim_core/cli.py", "import aim_plugin_kserve\n"),
    ("plans-without-io", "aim_core/template/plan.py", "from aim_core.runtime import engine\n"),
    ("plans-without-io", "aim_core/model/plan.py", "from aim_core.model.controller import ModelController\n"),
    ("plans-without-io", "aim_core/service/plan.py", "from aim_core import kube\n"),
    ("runtime-without-kinds", "aim_core/runtime/store.py", "from aim_core.service import plan\n"),
    (
        "runtime-without-kinds",
        "aim_core/runtime/engine.py",
        "from aim_core.reconcile import health\nfrom aim_core import template\n",
    ),
    ("kind-service", "aim_core/service/plan.py", "from aim_core.template.scope import Scope\n"),
    ("kind-template", "aim_core/template/decision.py", "from aim_core.model.aggregate import health\n"),
    ("kind-artifact", "aim_core/artifact/controller.py", "import aim_core.runtimeconfig.resolution\n"),
]


@pytest.mark.parametrize(("contract", "path", "source"), VIOLATIONS, ids=[f"{c}:{p}" for c, p, _ in VIOLATIONS])
def test_contract_catches_a_seeded_violation(scratch, contract, path, source):
    scratch(path, source)
    result = lint_imports("--contract", contract, cwd=scratch.root, pythonpath=scratch.root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout


# ---------------------------------------------------------------------------
# No import cycle between aim_core's modules, not even through TYPE_CHECKING
# ---------------------------------------------------------------------------

# Run in a subprocess so that the scratch tree's aim_core is the one found.
CYCLES = """
import json, sys
import grimp

graph = grimp.build_graph("aim_core", exclude_type_checking_imports=False, cache_dir=None)
edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
index, low, stack, on_stack, cycles = {}, {}, [], set(), []

def visit(v):  # Tarjan's strongly connected components
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        component = []
        while True:
            w = stack.pop()
            on_stack.discard(w)
            component.append(w)
            if w == v:
                break
        if len(component) > 1:
            cycles.append(sorted(component))

sys.setrecursionlimit(10_000)
for module in edges:
    if module not in index:
        visit(module)
print(json.dumps(sorted(cycles)))
"""


def import_cycles(cwd: Path = ROOT, pythonpath: Path | None = None) -> list[list[str]]:
    """Each set of aim_core modules that import each other, directly or round a loop."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    result = subprocess.run(
        [sys.executable, "-c", CYCLES], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def test_aim_core_has_no_import_cycle():
    assert import_cycles() == []


def test_the_cycle_check_sees_a_cycle_held_by_type_checking_imports(scratch):
    assert import_cycles(cwd=scratch.root, pythonpath=scratch.root) == []
    scratch("aim_core/service/a.py", "from aim_core.service import b\n")
    scratch(
        "aim_core/service/b.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from aim_core.service import c\n",
    )
    scratch("aim_core/service/c.py", "import aim_core.service.a\n")
    assert import_cycles(cwd=scratch.root, pythonpath=scratch.root) == [
        ["aim_core.service.a", "aim_core.service.b", "aim_core.service.c"]
    ]


# ---------------------------------------------------------------------------
# No import cycle between aim_core's packages (aim_core.<package>), not even through TYPE_CHECKING
# ---------------------------------------------------------------------------

PACKAGE_CYCLES = """
import collections, json, sys
import grimp

graph = grimp.build_graph("aim_core", exclude_type_checking_imports=False, cache_dir=None)
package = lambda m: ".".join(m.split(".")[:2])
edges = collections.defaultdict(set)
for m in graph.modules:
    for w in graph.find_modules_directly_imported_by(m):
        if package(m) != package(w):
            edges[package(m)].add(package(w))
def reach(start):
    seen, todo = set(), [start]
    while todo:
        for w in edges[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen
reachable = {p: reach(p) for p in list(edges)}
cyclic = sorted([a, b] for a in reachable for b in edges[a] if a in reachable.get(b, ()))
print(json.dumps(cyclic))
"""


def package_cycle_edges(cwd: Path = ROOT, pythonpath: Path | None = None) -> list[list[str]]:
    """``[a, b]`` for each import from package ``a`` to package ``b`` of aim_core that ``b`` imports back, round a loop."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    result = subprocess.run(
        [sys.executable, "-c", PACKAGE_CYCLES], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def test_aim_core_packages_form_no_import_cycle():
    """The CLI and the operator are the composition root: nothing below imports them, so they close no loop."""
    assert package_cycle_edges() == []


def test_the_package_cycle_check_sees_a_cycle_round_three_packages(scratch):
    assert package_cycle_edges(cwd=scratch.root, pythonpath=scratch.root) == []
    scratch("aim_core/service/a.py", "from aim_core.template import b\n")
    scratch(
        "aim_core/template/b.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import aim_core.model.c\n"
    )
    scratch("aim_core/model/c.py", "from aim_core.service import a\n")
    assert package_cycle_edges(cwd=scratch.root, pythonpath=scratch.root) == [
        ["aim_core.model", "aim_core.service"],
        ["aim_core.service", "aim_core.template"],
        ["aim_core.template", "aim_core.model"],
    ]


# ---------------------------------------------------------------------------
# Plugins import only aim_core's public names (import-linter cannot see __all__)
# ---------------------------------------------------------------------------


def non_public_imports(source: str, public: set[str]) -> list[str]:
    """``aim_core`` imports in ``source`` that reach past the public names."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            bad += [f"import {a.name}" for a in node.names if a.name.startswith("aim_core.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("aim_core."):
                bad.append(f"from {node.module} import ...")
            elif node.module == "aim_core":
                bad += [f"from aim_core import {a.name}" for a in node.names if a.name not in public]
    return bad


def test_the_public_name_check_catches_private_and_submodule_imports():
    source = (
        "import aim_core\n"
        "from aim_core import Health, hookimpl\n"
        "from aim_core import plugins\n"
        "from aim_core.reconcile.health import State\n"
        "import aim_core.api.fields\n"
        "from . import names\n"
    )
    assert non_public_imports(source, {"Health", "hookimpl"}) == [
        "from aim_core import plugins",
        "from aim_core.reconcile.health import ...",
        "import aim_core.api.fields",
    ]


@pytest.mark.parametrize("package", [*PLUGIN_PACKAGES, *EXAMPLE_PACKAGES], ids=lambda p: p.name)
def test_plugin_code_imports_only_public_core_names(package):
    public = set(aim_core.__all__)
    offences = {
        str(module.relative_to(ROOT)): bad
        for module in sorted(package.rglob("*.py"))
        if (bad := non_public_imports(module.read_text(), public))
    }
    assert offences == {}, "plugins may import only names in aim_core.__all__"


# ---------------------------------------------------------------------------
# Size and shape of the package (issue 21)
# ---------------------------------------------------------------------------

MAX_MODULE_LINES = 400


def long_modules(package: Path, limit: int = MAX_MODULE_LINES) -> dict[str, int]:
    """Modules of ``package`` with more than ``limit`` lines."""
    sizes = {str(p.relative_to(package.parent)): len(p.read_text().splitlines()) for p in package.rglob("*.py")}
    return {name: n for name, n in sizes.items() if n > limit}


def test_no_module_of_aim_core_is_over_400_lines():
    assert long_modules(ROOT / "aim_core") == {}


def test_the_size_check_sees_a_long_module(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert long_modules(tmp_path / "pkg") == {"pkg/long.py": MAX_MODULE_LINES + 1}


def test_the_root_of_aim_core_holds_only_the_package_face_and_packages():
    modules = sorted(p.name for p in (ROOT / "aim_core").glob("*.py"))
    assert modules == ["__init__.py", "__main__.py"]


# ---------------------------------------------------------------------------
# A module's private (_name) helpers stay in it (issue 21)
# ---------------------------------------------------------------------------


def private_imports(package: Path) -> list[str]:
    """``module <- owner._name`` for each underscore name a module of ``package`` imports from another module."""
    found = []
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                owner = "." * node.level + (node.module or "")
                if node.level == 0 and owner.split(".")[0] != package.name:
                    continue
                found += [
                    f"{module} <- {owner}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    return found


def test_no_module_of_aim_core_imports_another_modules_private_names():
    assert private_imports(ROOT / "aim_core") == [], (
        "make the helper public in the module that owns it (no leading underscore), or move it"
    )


def test_the_private_import_check_sees_one(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("def _helper(): ...\ndef helper(): ...\n")
    (tmp_path / "pkg" / "b.py").write_text(
        "from __future__ import annotations\nfrom pkg.a import helper\nfrom os import _exit\n"
    )
    assert private_imports(tmp_path / "pkg") == []
    (tmp_path / "pkg" / "c.py").write_text("from pkg.a import _helper, helper\n")
    (tmp_path / "pkg" / "d.py").write_text("from .a import _helper\n")
    assert private_imports(tmp_path / "pkg") == ["pkg.c <- pkg.a._helper", "pkg.d <- .a._helper"]
