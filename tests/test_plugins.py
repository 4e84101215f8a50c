"""The plugin manager: loading, switches, provider selection, introspection, CLI."""

from __future__ import annotations

import importlib
import json
import logging
import sys
import textwrap
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest

from aim_core import GpuDevice, Health, ResourceRef, State, hookimpl
from aim_core.cli import main
from aim_core.plugin.manager import (
    ENTRY_POINT_GROUP,
    DuplicateProviderError,
    PluginError,
    PluginLoadError,
    PluginNotFoundError,
    describe_plugins,
    get_plugin_manager,
    providers,
    registry_client,
    select,
)

INSTALLED = {
    "bench_genai": "aim-engine-bench-genai",
    "gateway": "aim-engine-gateway",
    "gpu_amd": "aim-engine-gpu-amd",
    "gpu_nvidia": "aim-engine-gpu-nvidia",
    "keda": "aim-engine-keda",
    "kserve": "aim-engine-kserve",
    "lws": "aim-engine-lws",
    "registry_dockerhub": "aim-engine-registry-dockerhub",
    "registry_ghcr": "aim-engine-registry-ghcr",
    "registry_oci": "aim-engine",  # the core's generic OCI registry client
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AIM_ENGINE_PLUGINS", "AIM_ENGINE_DISABLE_PLUGINS", "AIM_ENGINE_TRACE_PLUGINS"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def install_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    """Install a throwaway plugin distribution (module + dist-info) on ``sys.path``.

    Returns the module name. The entry point is real metadata, found by
    ``importlib.metadata`` exactly like an installed wheel's.
    """
    modules: list[str] = []

    def install(name: str, source: str, *, dist: str | None = None, dist_version: str = "9.8.7") -> str:
        dist = dist or f"aim-engine-test-{name.replace('_', '-')}"
        module = f"aim_test_plugin_{name}_{len(modules)}"
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        info = tmp_path / f"{dist.replace('-', '_')}-{dist_version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {dist_version}\n")
        (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{name} = {module}\n")
        modules.append(module)
        return module

    monkeypatch.syspath_prepend(str(tmp_path))
    yield install
    for module in modules:
        sys.modules.pop(module, None)
    importlib.invalidate_caches()


def names(pm) -> set[str]:
    return {name for name, plugin in pm.list_name_plugin() if plugin is not None}


# ---------------------------------------------------------------------------
# Loading and switches
# ---------------------------------------------------------------------------


def test_loads_every_installed_plugin_under_its_entry_point_name():
    pm = get_plugin_manager()
    assert names(pm) == set(INSTALLED)


def test_load_entrypoints_false_gives_an_empty_manager_with_the_hookspecs():
    pm = get_plugin_manager(load_entrypoints=False)
    assert names(pm) == set()
    assert pm.hook.aim_gpu_vendors() == []


def test_env_allowlist_loads_only_the_named_plugins(monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_PLUGINS", " kserve, gpu_amd ,")
    assert names(get_plugin_manager()) == {"kserve", "gpu_amd"}


def test_empty_allowlist_means_all(monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_PLUGINS", "")
    assert names(get_plugin_manager()) == set(INSTALLED)


def test_env_blocklist_skips_the_named_plugins(monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_DISABLE_PLUGINS", "keda,gateway")
    assert names(get_plugin_manager()) == set(INSTALLED) - {"keda", "gateway"}


def test_blocklist_applies_after_the_allowlist(monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_PLUGINS", "kserve,keda")
    monkeypatch.setenv("AIM_ENGINE_DISABLE_PLUGINS", "keda")
    assert names(get_plugin_manager()) == {"kserve"}


def test_explicit_arguments_win_over_the_environment(monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_PLUGINS", "kserve")
    monkeypatch.setenv("AIM_ENGINE_DISABLE_PLUGINS", "gpu_amd")
    assert names(get_plugin_manager(only=["gpu_amd", "gpu_nvidia"], disabled=[])) == {"gpu_amd", "gpu_nvidia"}
    assert names(get_plugin_manager(only="", disabled="gpu_nvidia")) == set(INSTALLED) - {"gpu_nvidia"}


def test_a_blocked_name_also_refuses_explicit_registration():
    class Throwaway:
        pass

    pm = get_plugin_manager(load_entrypoints=False, disabled=["throwaway"])
    assert pm.register(Throwaway(), name="throwaway") is None
    assert describe_plugins(pm) == []


def test_unknown_allowlisted_name_fails_start_up_naming_it(monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_PLUGINS", "kserve,kservee")
    with pytest.raises(PluginNotFoundError, match=r"plugin 'kservee' not found; is the plugin installed\?") as info:
        get_plugin_manager()
    assert "kserve," in str(info.value)  # lists what is installed


def test_unknown_blocklisted_name_is_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="aim_engine.plugins"):
        pm = get_plugin_manager(only=["kserve"], disabled=["no_such_plugin"])
    assert names(pm) == {"kserve"}
    assert "no_such_plugin" in caplog.text


def test_broken_plugin_import_fails_start_up_with_its_name_and_distribution(install_plugin):
    install_plugin("broken", "import aim_core.does_not_exist\n", dist="aim-engine-broken", dist_version="0.0.1")
    with pytest.raises(PluginLoadError) as info:
        get_plugin_manager(only=["broken", "kserve"])
    err = info.value
    assert "plugin 'broken'" in str(err)
    assert "aim-engine-broken 0.0.1" in str(err)
    assert "aim_core.does_not_exist" in str(err)
    assert (err.plugin, err.distribution) == ("broken", "aim-engine-broken")
    assert isinstance(err.__cause__, ImportError)


def test_broken_plugin_can_be_disabled_to_start_without_it(install_plugin):
    install_plugin("broken", "raise RuntimeError('boom at import')\n")
    with pytest.raises(PluginLoadError, match="boom at import"):
        get_plugin_manager(only=["broken", "kserve"])
    assert names(get_plugin_manager(only=["broken", "kserve"], disabled=["broken"])) == {"kserve"}


def test_plugin_implementing_a_misspelt_hook_fails_start_up_naming_it(install_plugin):
    install_plugin(
        "typo",
        """
        from aim_core import hookimpl

        @hookimpl
        def aim_gpu_vendor():
            return []
        """,
    )
    with pytest.raises(PluginLoadError, match=r"plugin 'typo'.*aim_gpu_vendor") as info:
        get_plugin_manager(only=["typo"])
    assert info.value.distribution == "aim-engine-test-typo"


# ---------------------------------------------------------------------------
# Trace switch
# ---------------------------------------------------------------------------


class _Vendor:
    """A minimal GpuVendor."""

    def __init__(self, name: str) -> None:
        self.name = name

    def detect(self, node):
        return [GpuDevice(vendor=self.name, model="X1", count=1, resource_name=f"{self.name}.com/gpu")]

    def normalize_model(self, model):
        return None

    def preference(self):
        return ["X1"]

    def node_affinity_terms(self, model, min_vram_bytes, inventory):
        return None

    def watches_node_key(self, key):
        return False

    def __repr__(self) -> str:
        return f"<vendor {self.name}>"


def vendor_plugin(*vendor_names: str) -> object:
    class Plugin:
        @hookimpl
        def aim_gpu_vendors(self):
            return [_Vendor(n) for n in vendor_names]

    return Plugin()


def test_trace_env_logs_every_hook_call_and_its_result(monkeypatch, caplog):
    monkeypatch.setenv("AIM_ENGINE_TRACE_PLUGINS", "1")
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(vendor_plugin("acme"), name="acme_gpus")
    with caplog.at_level(logging.INFO, logger="aim_engine.plugins"):
        pm.hook.aim_gpu_vendors()
        pm.hook.aim_registry_client(registry="quay.io")
    messages = [r.getMessage() for r in caplog.records if r.name == "aim_engine.plugins"]
    assert messages == [
        "hook aim_gpu_vendors() calls ['acme_gpus']",
        "hook aim_gpu_vendors() returned [[<vendor acme>]]",
        "hook aim_registry_client(registry='quay.io') calls []",
        "hook aim_registry_client(registry='quay.io') returned None",
    ]


def test_trace_logs_a_raising_hook(caplog):
    class Raising:
        @hookimpl
        def aim_autoscalers(self):
            raise ValueError("scaler exploded")

    pm = get_plugin_manager(load_entrypoints=False, trace=True)
    pm.register(Raising(), name="raising")
    with caplog.at_level(logging.INFO, logger="aim_engine.plugins"), pytest.raises(ValueError):
        pm.hook.aim_autoscalers()
    assert "hook aim_autoscalers() raised ValueError('scaler exploded')" in caplog.text


@pytest.mark.parametrize(("env", "trace"), [("", None), ("0", None), ("1", False)])
def test_no_trace_unless_switched_on(monkeypatch, caplog, env, trace):
    monkeypatch.setenv("AIM_ENGINE_TRACE_PLUGINS", env)
    pm = get_plugin_manager(load_entrypoints=False, trace=trace)
    pm.register(vendor_plugin("acme"), name="acme_gpus")
    with caplog.at_level(logging.DEBUG, logger="aim_engine.plugins"):
        pm.hook.aim_gpu_vendors()
    assert caplog.records == []


# ---------------------------------------------------------------------------
# Provider selection
# ---------------------------------------------------------------------------


class _Runtime:
    resource = ResourceRef("serving.example.com/v1", "Server", "servers")

    def __init__(self, name: str) -> None:
        self.name = name

    def build(self, request):
        return [{"kind": "Server", "metadata": {"name": request.name}}]

    def health(self, live, pods, events):
        return Health(State.READY)

    def backend_service(self, name):
        return f"{name}-svc"

    def pod_selector(self, name):
        return {"app": name}


class _Route:
    resource = ResourceRef("routes.example.com/v1", "Route", "routes")

    def __init__(self, name: str) -> None:
        self.name = name

    def build(self, request):
        return {"kind": "Route"}

    def health(self, live):
        return Health(State.READY)


class _Scaler:
    def __init__(self, name: str) -> None:
        self.name = name

    def apply(self, objects, request):
        return None

    def scaler(self, serving_name):
        return ResourceRef("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers"), serving_name

    def health(self, live, runtime_ready):
        return Health(State.READY)

    def replicas(self, live):
        return None


def test_providers_collects_every_plugins_providers_by_name():
    class Runtimes:
        @hookimpl
        def aim_runtime_builders(self):
            return [_Runtime("kserve"), _Runtime("deployment")]

    class Nothing:
        @hookimpl
        def aim_runtime_builders(self):
            return None  # provides none

    class Routes:
        @hookimpl
        def aim_route_builders(self):
            return (_Route(n) for n in ["httproute"])

    class Scalers:
        @hookimpl
        def aim_autoscalers(self):
            return [_Scaler("keda")]

    pm = get_plugin_manager(load_entrypoints=False)
    for plugin in (Runtimes(), Nothing(), Routes(), Scalers()):
        pm.register(plugin)
    assert sorted(providers(pm, "aim_runtime_builders")) == ["deployment", "kserve"]
    assert list(providers(pm, "aim_route_builders")) == ["httproute"]
    assert select(pm, "aim_autoscalers", "keda").name == "keda"
    assert select(pm, "aim_runtime_builders", "deployment").backend_service("x") == "x-svc"


def test_duplicate_provider_names_fail_naming_both_plugins():
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(vendor_plugin("amd"), name="gpu_amd")
    pm.register(vendor_plugin("nvidia", "amd"), name="gpu_knockoff")
    with pytest.raises(DuplicateProviderError) as info:
        providers(pm, "aim_gpu_vendors")
    message = str(info.value)
    assert "GPU vendor 'amd'" in message
    assert "'gpu_amd'" in message and "'gpu_knockoff'" in message


def test_select_unknown_name_says_not_found_and_lists_available():
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(vendor_plugin("amd", "nvidia"), name="gpus")
    with pytest.raises(PluginNotFoundError) as info:
        select(pm, "aim_gpu_vendors", "intel")
    assert str(info.value) == "GPU vendor 'intel' not found; is the plugin installed? (available: amd, nvidia)"


def test_select_with_no_plugins_says_none_available():
    with pytest.raises(PluginNotFoundError, match=r"runtime builder 'kserve' not found.*\(available: none\)"):
        select(get_plugin_manager(load_entrypoints=False), "aim_runtime_builders", "kserve")


def test_provider_without_a_name_or_protocol_is_refused_naming_the_plugin():
    class Nameless:
        @hookimpl
        def aim_autoscalers(self):
            return [object()]

    class Incomplete:
        @hookimpl
        def aim_route_builders(self):
            return [_Scaler("not-a-route")]

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(Nameless(), name="nameless")
    pm.register(Incomplete(), name="incomplete")
    with pytest.raises(PluginError, match=r"plugin 'nameless' returned .* without a string `name`"):
        providers(pm, "aim_autoscalers")
    with pytest.raises(
        PluginError,
        match=r"plugin 'incomplete' returned 'not-a-route' .* not a RouteBuilder \(missing: build, resource\)",
    ):
        providers(pm, "aim_route_builders")


def test_providers_refuses_unknown_and_first_result_hooks():
    pm = get_plugin_manager(load_entrypoints=False)
    with pytest.raises(PluginError, match="unknown hook 'aim_gpus'"):
        providers(pm, "aim_gpus")
    with pytest.raises(PluginError, match="first-result hook"):
        providers(pm, "aim_registry_client")


class _Registry:
    def __init__(self, name: str) -> None:
        self.name = name

    async def list_repositories(self, pattern, credentials):
        return []

    async def list_tags(self, repository, credentials):
        return []

    async def image_info(self, image, credentials):
        raise NotImplementedError


def test_registry_client_asks_plugins_until_one_answers_and_the_fallback_goes_last():
    class Ghcr:
        @hookimpl
        def aim_registry_client(self, registry):
            return _Registry("ghcr") if registry == "ghcr.io" else None

    class Generic:
        @hookimpl(trylast=True)
        def aim_registry_client(self, registry):
            return _Registry("oci")

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(Generic(), name="generic")  # registered first, still asked last
    pm.register(Ghcr(), name="ghcr")
    assert registry_client(pm, "ghcr.io").name == "ghcr"
    assert registry_client(pm, "quay.io:443").name == "oci"


def test_registry_client_for_an_unhandled_host_says_not_found():
    with pytest.raises(
        PluginNotFoundError, match=r"registry client for 'quay.io' not found; is the plugin installed\?"
    ):
        registry_client(get_plugin_manager(load_entrypoints=False), "quay.io")


# ---------------------------------------------------------------------------
# Introspection and the `plugins` command
# ---------------------------------------------------------------------------


HOOKED = """
from aim_core import hookimpl

@hookimpl
def aim_gpu_vendors():
    return []

@hookimpl
def aim_autoscalers():
    return []
"""


def test_describe_lists_entry_point_plugins_with_distribution_version_and_hooks(install_plugin):
    install_plugin("hooked", HOOKED, dist="aim-engine-hooked", dist_version="2.3.4")
    install_plugin("bare", "", dist="aim-engine-bare", dist_version="0.0.1")
    pm = get_plugin_manager(only=["hooked", "bare", "kserve"])
    rows = describe_plugins(pm)
    assert [row["name"] for row in rows] == ["bare", "hooked", "kserve"]
    assert rows[0] == {"name": "bare", "version": "0.0.1", "distribution": "aim-engine-bare", "hooks": []}
    assert rows[1] == {
        "name": "hooked",
        "version": "2.3.4",
        "distribution": "aim-engine-hooked",
        "hooks": ["aim_autoscalers", "aim_gpu_vendors"],
    }
    assert (rows[2]["version"], rows[2]["distribution"]) == (version("aim-engine-kserve"), "aim-engine-kserve")


def test_describe_lists_explicitly_registered_plugins():
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(vendor_plugin("acme"), name="throwaway")
    pm.register(importlib.import_module("aim_core.plugin.hookspecs"), name="core_module")
    rows = {row["name"]: row for row in describe_plugins(pm)}
    assert rows["throwaway"] == {
        "name": "throwaway",
        "version": None,
        "distribution": None,
        "hooks": ["aim_gpu_vendors"],
    }
    assert rows["core_module"]["distribution"] == "aim-engine"
    assert rows["core_module"]["version"] == version("aim-engine")


def test_plugins_command_prints_each_plugin_with_version_distribution_and_hooks(install_plugin, monkeypatch, capsys):
    install_plugin("hooked", HOOKED, dist="aim-engine-hooked", dist_version="2.3.4")
    install_plugin("bare", "", dist="aim-engine-bare", dist_version="0.0.1")
    monkeypatch.setenv("AIM_ENGINE_PLUGINS", "hooked,bare")
    assert main(["plugins"]) == 0
    assert capsys.readouterr().out == (
        "bare 0.0.1  [aim-engine-bare]\n"
        "    hooks: (no hooks yet)\n"
        "hooked 2.3.4  [aim-engine-hooked]\n"
        "    hooks: aim_autoscalers, aim_gpu_vendors\n"
    )


def test_plugins_command_json_lists_every_installed_plugin(capsys):
    assert main(["plugins", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == sorted(INSTALLED)
    for row in rows:
        assert row["distribution"] == INSTALLED[row["name"]]
        assert row["version"] == version(INSTALLED[row["name"]])
        assert set(row) == {"name", "version", "distribution", "hooks"}
    assert rows == describe_plugins(get_plugin_manager())


def test_plugins_command_honours_the_blocklist(monkeypatch, capsys):
    monkeypatch.setenv("AIM_ENGINE_DISABLE_PLUGINS", "keda")
    main(["plugins", "--json"])
    assert "keda" not in [row["name"] for row in json.loads(capsys.readouterr().out)]
