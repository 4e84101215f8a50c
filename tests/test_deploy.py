"""The install manifests in ``deploy/`` agree with the code.

``kubectl`` and ``kustomize`` are not available here, so the manifests are
checked by parsing them. The RBAC needs are derived from the code, not from a
hand-kept list:

- every resource the running operator watches (``Runtime.watched()`` with the
  real controllers and plugins): get, list, watch;
- what kopf itself reads: CRDs and namespaces (``kopf/_core/reactor/observation.py``);
- the children the service controller's providers build (runtime builders,
  route builder), of every kind they declare: create and patch (server-side
  apply creates when absent), delete (an object a builder stops returning);
  and what the Roles they build grant (``grants``: a Role may only grant what
  its creator holds);
- every ``<...>.want(RESOURCE, ...)`` and ``<...>.kube.<verb>(RESOURCE, ...)``
  call in ``aim_core`` (found by parsing the source), with the verb it needs;
- the controllers' own kinds: patch (finalizers); the status subresource of
  every AIM kind: patch;
- the leader Lease, granted by the Role in the operator namespace.

A rule added to the code without RBAC makes these tests fail; the tests at the
end prove that on deliberately reduced copies of the manifests.
"""

from __future__ import annotations

import ast
import copy
import logging
from pathlib import Path
from typing import Any

import yaml

from aim_core.cli import build_parser
from aim_core.operator.controllers import build_controllers
from aim_core.operator.run import settings_from_args
from aim_core.operator.settings import DEFAULT_OPERATOR_NAMESPACE, Settings
from aim_core.operator.wiring import Runtime
from aim_core.plugin.manager import get_plugin_manager
from aim_core.reconcile import resources as res
from aim_core.reconcile.labels import DISCOVERY_LEASE
from aim_core.runtime.leader import LEASE_NAME, default_identity

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
CRDS = ROOT / "aim_core" / "crds" / "aim.eai.amd.com_crds.yaml"

READ = ("get", "list", "watch")
APPLY = ("create", "patch")  # server-side apply: patch, and create when the object is absent

# Need: (apiGroup, resource, verb, resourceName or None)
Need = tuple[str, str, str, "str | None"]


# --------------------------------------------------------------- manifests


def load_manifests() -> list[dict[str, Any]]:
    docs = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


MANIFESTS = load_manifests()


def one(kind: str) -> dict[str, Any]:
    found = [d for d in MANIFESTS if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind} in deploy/, found {len(found)}"
    return found[0]


def named(kind: str, name: str) -> dict[str, Any]:
    found = [d for d in MANIFESTS if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name} in deploy/, found {len(found)}"
    return found[0]


MANAGER_ROLE = "aim-engine-manager-role"
STATUS_UPDATER_ROLE = "aim-engine-artifact-status-updater"
METRICS_READER_ROLE = "aim-engine-metrics-reader"


def deployment() -> dict[str, Any]:
    return one("Deployment")


def container() -> dict[str, Any]:
    containers = deployment()["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


# ------------------------------------------------------------ what the code needs


def runtime() -> Runtime:
    pm = get_plugin_manager()
    return Runtime(Settings(), build_controllers(pm), pm)


def service_controller(rt: Runtime) -> Any:
    return next(c for c in rt.engine.controllers.values() if c.name == "service")


# kube adapter method -> RBAC verbs
KUBE_VERBS = {
    "get": ("get",),
    "list": ("list",),
    "create": ("create",),
    "replace": ("update",),
    "patch": ("patch",),
    "apply": APPLY,
    "delete": ("delete",),
}


def _is_kube(node: ast.expr) -> bool:
    """``kube``, ``self.kube``, ``ctx.kube``, ``self.ctx.kube``, ..."""
    return (isinstance(node, ast.Name) and node.id == "kube") or (
        isinstance(node, ast.Attribute) and node.attr == "kube"
    )


def scan_source() -> dict[tuple[str, str], set[str]]:
    """``(resource constant, verb)`` -> files, for every API call in aim_core that names a constant."""
    found: dict[tuple[str, str], set[str]] = {}
    package = ROOT / "aim_core"
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("testing/aim_testing/", "aim_core/kube/")):
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=rel)):
            if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Attribute, ast.Name)):
                continue
            method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if method == "read_log" and _is_kube(node.func.value):
                found.setdefault(("PODS/log", "get"), set()).add(rel)
                continue
            if method == "want":
                verbs = APPLY
            elif isinstance(node.func, ast.Name) and node.func.id == "Deletion":
                verbs = ("delete",)
            elif method in KUBE_VERBS and _is_kube(node.func.value):
                verbs = KUBE_VERBS[method]
            else:
                continue
            if not node.args or not isinstance(node.args[0], ast.Name) or not node.args[0].id.isupper():
                continue  # a resource held in a variable: covered by watched(), the providers and controllers
            for verb in verbs:
                found.setdefault((node.args[0].id, verb), set()).add(rel)
    return found


def _ref(const: str) -> res.ResourceRef:
    ref = getattr(res, const, None)
    assert isinstance(ref, res.ResourceRef), (
        f"{const} is passed to the API but is not a ResourceRef in aim_core.reconcile.resources; teach tests/test_deploy.py"
    )
    return ref


def code_needs() -> tuple[set[Need], set[Need]]:
    """(cluster-wide needs, needs in the operator namespace) derived from the code."""
    rt = runtime()
    cluster: set[Need] = set()
    operator_ns: set[Need] = set()
    for ref in rt.watched():
        cluster |= {(ref.group, ref.plural, verb, None) for verb in READ}
    # Events: listed and watched per involved kind by the operator's own streams (not kopf's)
    if rt.event_streams():
        cluster |= {("", "events", verb, None) for verb in ("list", "watch")}
    # kopf's observers: CRDs (resource scanning) and namespaces (namespace patterns)
    cluster |= {("apiextensions.k8s.io", "customresourcedefinitions", v, None) for v in ("list", "watch")}
    cluster |= {("", "namespaces", v, None) for v in ("list", "watch")}
    # children built by the service controller's providers, of every kind they declare: applied, and
    # deleted when a builder stops returning one
    providers = service_controller(rt).providers
    for child in providers.owned_kinds():
        cluster |= {(child.group, child.plural, verb, None) for verb in (*APPLY, "delete")}
    # what the Roles a builder creates grant (its optional ``grants``): the API server lets the
    # operator create a Role only with permissions it holds itself (RBAC escalation prevention)
    for builder in (*providers.runtimes, providers.route):
        for group, plural, verbs in getattr(builder, "grants", ()) or ():
            cluster |= {(group, plural, verb, None) for verb in verbs}
    # each controller patches its own kind (finalizers) and, if it writes status, its status subresource
    for controller in rt.engine.controllers.values():
        ref = controller.resource
        cluster.add((ref.group, ref.plural, "patch", None))
        if controller.writes_status:
            cluster.add((ref.group, f"{ref.plural}/status", "patch", None))
    for ref in res.AIM_RESOURCES:
        cluster.add((ref.group, f"{ref.plural}/status", "patch", None))
    # every call naming a resource constant
    for const, verb in scan_source():
        if const == "PODS/log":
            cluster.add(("", "pods/log", verb, None))
            continue
        ref = _ref(const)
        if ref == res.LEASES:
            # the leader and discovery Leases (both taken by LeaderElector), by name;
            # `create` cannot be limited by name in RBAC
            for lease in (LEASE_NAME, DISCOVERY_LEASE):
                operator_ns.add((ref.group, ref.plural, verb, None if verb == "create" else lease))
        else:
            cluster.add((ref.group, ref.plural, verb, None))
    return cluster, operator_ns


def grants(rules: list[dict[str, Any]], need: Need) -> bool:
    group, resource, verb, name = need
    for rule in rules:
        if (
            group in rule.get("apiGroups", [])
            and resource in rule.get("resources", [])
            and verb in rule.get("verbs", [])
        ):
            names = rule.get("resourceNames")
            if not names or (name is not None and name in names):
                return True
    return False


def missing(rules: list[dict[str, Any]], needs: set[Need]) -> list[Need]:
    return sorted((n for n in needs if not grants(rules, n)), key=lambda n: (n[0], n[1], n[2], n[3] or ""))


def cluster_rules() -> list[dict[str, Any]]:
    return named("ClusterRole", MANAGER_ROLE)["rules"]


def role_rules() -> list[dict[str, Any]]:
    return one("Role")["rules"]


# ------------------------------------------------------------------- tests: kustomize


def test_kustomization_lists_every_manifest_and_nothing_else():
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert kustomization["kind"] == "Kustomization"
    listed = kustomization["resources"]
    assert len(listed) == len(set(listed))
    on_disk = {p.name for p in DEPLOY.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(listed) == on_disk
    for name in listed:
        assert "/" not in name, "kustomize loads nothing outside deploy/ by default"


def test_every_manifest_is_well_formed():
    namespaced = {"ServiceAccount", "Role", "RoleBinding", "Deployment", "Service"}
    for doc in MANIFESTS:
        assert doc.get("apiVersion") and doc.get("kind") and doc["metadata"].get("name"), doc
        if doc["kind"] in namespaced:
            assert doc["metadata"].get("namespace") == DEFAULT_OPERATOR_NAMESPACE, doc["metadata"]
        else:
            assert "namespace" not in doc["metadata"], doc["metadata"]
    kinds = sorted(d["kind"] for d in MANIFESTS)
    assert kinds == sorted(
        [
            "Namespace",
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "Deployment",
            "ClusterRole",
            "Service",
            "ClusterRole",
        ]
    )


def test_names_are_upstreams():
    assert one("Namespace")["metadata"]["name"] == "aim-system" == DEFAULT_OPERATOR_NAMESPACE
    assert one("ServiceAccount")["metadata"]["name"] == "aim-engine-controller-manager"
    assert {d["metadata"]["name"] for d in MANIFESTS if d["kind"] == "ClusterRole"} == {
        MANAGER_ROLE,
        STATUS_UPDATER_ROLE,
        METRICS_READER_ROLE,
    }
    assert deployment()["metadata"]["name"] == "aim-engine-controller-manager"


def test_crds_are_not_in_the_base():
    assert not any(d["kind"] == "CustomResourceDefinition" for d in MANIFESTS)


# -------------------------------------------------------------- tests: bindings


def test_deployment_runs_as_the_bound_service_account():
    dep = deployment()
    sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
    ns = dep["metadata"]["namespace"]
    assert one("ServiceAccount")["metadata"] == {**one("ServiceAccount")["metadata"], "name": sa, "namespace": ns}
    for binding_kind, role_kind, role_name in (
        ("ClusterRoleBinding", "ClusterRole", MANAGER_ROLE),
        ("RoleBinding", "Role", one("Role")["metadata"]["name"]),
    ):
        binding = one(binding_kind)
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role_kind,
            "name": named(role_kind, role_name)["metadata"]["name"],
        }
    assert one("RoleBinding")["metadata"]["namespace"] == one("Role")["metadata"]["namespace"] == ns


def test_nothing_is_granted_with_wildcards():
    for role in [d for d in MANIFESTS if d["kind"] in ("ClusterRole", "Role")]:
        for rule in role["rules"]:
            if role["metadata"]["name"] == METRICS_READER_ROLE:
                assert rule == {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}  # only that URL
                continue
            assert "nonResourceURLs" not in rule
            for field in ("apiGroups", "resources", "verbs", "resourceNames"):
                values = rule.get(field, [])
                assert isinstance(values, list)
                assert not any("*" in v for v in values), f"{role['metadata']['name']}: {field} {values}"
            assert rule["resources"] and rule["verbs"]


# --------------------------------------------------------------- tests: RBAC vs code


def test_the_source_scan_finds_the_known_calls():
    """Guards the scanner itself: if it found nothing, the RBAC tests below would prove nothing."""
    found = scan_source()
    for key in [
        ("TEMPLATE_CACHES", "create"),
        ("TEMPLATE_CACHES", "patch"),
        ("TEMPLATE_CACHES", "delete"),
        ("MODELS", "create"),
        ("TEMPLATES", "patch"),
        ("ARTIFACTS", "create"),
        ("ARTIFACTS", "delete"),
        ("EVENTS", "create"),
        ("EVENTS", "patch"),
        ("PODS/log", "get"),
        ("LEASES", "get"),
        ("LEASES", "create"),
        ("LEASES", "update"),
    ]:
        assert key in found, key


def test_all_plugins_that_build_children_are_installed():
    providers = service_controller(runtime()).providers
    assert providers.missing == {}
    assert providers.runtime is not None and providers.route is not None


def test_cluster_role_grants_everything_the_code_needs():
    cluster, _ = code_needs()
    assert len(cluster) > 50
    assert missing(cluster_rules(), cluster) == []


def test_cluster_role_reads_every_watched_resource():
    for ref in runtime().watched():
        for verb in READ:
            assert grants(cluster_rules(), (ref.group, ref.plural, verb, None)), (ref.kind, verb)


def test_cluster_role_covers_every_crd_fully():
    crds = [d for d in yaml.safe_load_all(CRDS.read_text()) if d]
    plurals = {(c["spec"]["group"], c["spec"]["names"]["plural"]) for c in crds}
    assert plurals == {(r.group, r.plural) for r in res.AIM_RESOURCES}
    for group, plural in plurals:
        for verb in ("get", "list", "watch", "create", "patch", "delete"):
            assert grants(cluster_rules(), (group, plural, verb, None)), (plural, verb)
        assert grants(cluster_rules(), (group, f"{plural}/status", "patch", None)), plural
        assert grants(cluster_rules(), (group, f"{plural}/finalizers", "update", None)), plural


def test_leader_lease_is_granted_in_the_operator_namespace_only():
    _, operator_ns = code_needs()
    assert operator_ns == {
        ("coordination.k8s.io", "leases", "get", LEASE_NAME),
        ("coordination.k8s.io", "leases", "update", LEASE_NAME),
        ("coordination.k8s.io", "leases", "get", DISCOVERY_LEASE),
        ("coordination.k8s.io", "leases", "update", DISCOVERY_LEASE),
        ("coordination.k8s.io", "leases", "create", None),
    }
    assert missing(role_rules(), operator_ns) == []
    granted = {
        (g, r, v, n)
        for rule in role_rules()
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
        for n in rule.get("resourceNames") or [None]
    }
    assert granted == operator_ns  # the Role grants exactly what the elector does, nothing more
    assert not any(grants(cluster_rules(), need) for need in operator_ns)
    # the Role's get/update are tied to our Lease, not every Lease in the namespace
    assert not grants(role_rules(), ("coordination.k8s.io", "leases", "update", "someone-elses-lease"))


def test_cluster_role_grants_nothing_the_code_does_not_need():
    """Every granted (group, resource) is one the code uses; verbs may be broader (full CRUD on our kinds)."""
    cluster, _ = code_needs()
    used = {(g, r) for g, r, _, _ in cluster}
    # our own API: full access to all ten kinds, also those whose controllers are still to come
    used |= {(r.group, r.plural) for r in res.AIM_RESOURCES}
    used |= {(r.group, f"{r.plural}/finalizers") for r in res.AIM_RESOURCES}  # owner-reference admission
    used.add(("rbac.authorization.k8s.io", "clusterroles"))  # `bind` on the status-updater role (see below)
    granted = {(g, r) for rule in cluster_rules() for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted - used == set()


# ---------------------------------------------- tests: the checks catch reduced RBAC


def _without(rules: list[dict[str, Any]], resource: str) -> list[dict[str, Any]]:
    reduced = copy.deepcopy(rules)
    for rule in reduced:
        rule["resources"] = [r for r in rule["resources"] if r != resource]
    return [r for r in reduced if r["resources"]]


def test_a_watched_resource_without_rbac_is_caught():
    cluster, _ = code_needs()
    reduced = _without(cluster_rules(), "nodes")
    assert [n for n in missing(reduced, cluster)] == [("", "nodes", v, None) for v in ("get", "list", "watch")]


def test_a_newly_watched_resource_is_caught():
    cluster, _ = code_needs()
    widgets = res.ResourceRef("example.com/v1", "Widget", "widgets")  # a resource no rule grants
    needs = cluster | {(widgets.group, widgets.plural, verb, None) for verb in READ}
    assert missing(cluster_rules(), needs) == [("example.com", "widgets", v, None) for v in ("get", "list", "watch")]


def test_a_missing_apply_or_status_verb_is_caught():
    cluster, _ = code_needs()
    reduced = copy.deepcopy(cluster_rules())
    for rule in reduced:
        if "httproutes" in rule["resources"] or "aimservices/status" in rule["resources"]:
            rule["verbs"] = [v for v in rule["verbs"] if v != "patch"]
    # the status rule lists all ten kinds, so all ten status writes go
    assert missing(reduced, cluster) == sorted(
        [(r.group, f"{r.plural}/status", "patch", None) for r in res.AIM_RESOURCES]
        + [("gateway.networking.k8s.io", "httproutes", "patch", None)]
    )


def test_a_lease_rule_for_another_name_is_caught():
    _, operator_ns = code_needs()
    reduced = copy.deepcopy(role_rules())
    for rule in reduced:
        if rule.get("resourceNames"):
            rule["resourceNames"] = ["other"]
    assert {n[2] for n in missing(reduced, operator_ns)} == {"get", "update"}


# -------------------------------------------------------------- tests: the Deployment


def test_deployment_shape():
    dep = deployment()
    spec = dep["spec"]
    assert spec["replicas"] == 1
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    c = container()
    assert c["image"] == "docker.io/amdenterpriseai/aim-engine:latest"
    assert c["command"] == ["aim-engine"]
    assert c["args"] == [
        "run",
        "-A",
        "--leader-elect",
        "--metrics-bind-address=:8443",
        "--health-probe-bind-address=:8081",
        "--log-format",
        "json",
        "--log-level",
        "info",
    ]
    assert c["resources"] == {
        "requests": {"cpu": "100m", "memory": "256Mi"},
        "limits": {"cpu": "500m", "memory": "4Gi"},
    }


def test_console_script_exists():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert container()["command"][0] in scripts


def test_args_are_accepted_by_the_cli(monkeypatch):
    monkeypatch.setenv("AIM_SYSTEM_NAMESPACE", "aim-system")
    args = build_parser().parse_args(container()["args"])
    assert args.command == "run" and args.log_format == "json"
    settings = settings_from_args(args)
    assert settings.namespaces == ()  # all namespaces: hence a ClusterRole
    assert settings.leader_election is True
    assert settings.operator_namespace == one("Role")["metadata"]["namespace"]


def _port(address: str) -> int:
    host, _, port = address.rpartition(":")
    assert host == "", "an empty host listens on every interface: reachable by the kubelet and Prometheus"
    return int(port)


def test_probes_match_the_health_probe_flag():
    c = container()
    args = build_parser().parse_args(c["args"])
    assert args.liveness is None
    port = _port(args.health_probe_bind_address)
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}
    assert {"name": "health", "containerPort": port, "protocol": "TCP"} in c["ports"]


def test_metrics_service_reaches_the_metrics_flag():
    c = container()
    port = _port(build_parser().parse_args(c["args"]).metrics_bind_address)
    assert {"name": "metrics", "containerPort": port, "protocol": "TCP"} in c["ports"]
    service = one("Service")
    assert service["metadata"]["name"] == "aim-engine-controller-manager-metrics-service"
    pod_labels = deployment()["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    [service_port] = service["spec"]["ports"]
    assert service_port["targetPort"] == "metrics" and service_port["port"] == port


def test_metrics_are_served_securely_and_the_reader_role_grants_only_metrics():
    args = build_parser().parse_args(container()["args"])
    assert args.metrics_secure is True  # HTTPS, TokenReview and SubjectAccessReview (F85)
    [service_port] = one("Service")["spec"]["ports"]
    assert service_port["name"] == "https"
    [reader] = [d for d in MANIFESTS if d["kind"] == "ClusterRole" and d["metadata"]["name"] == METRICS_READER_ROLE]
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    # the operator may ask both reviews (the source scan finds the calls; this pins why they are there)
    assert grants(cluster_rules(), ("authentication.k8s.io", "tokenreviews", "create", None))
    assert grants(cluster_rules(), ("authorization.k8s.io", "subjectaccessreviews", "create", None))


def test_log_level_flag_is_accepted():
    from aim_core.operator.logs import resolve_level

    args = build_parser().parse_args(container()["args"])
    assert resolve_level(args.log_level, verbose=args.verbose) == logging.INFO


def test_env_comes_from_the_downward_api(monkeypatch):
    env = {e["name"]: e for e in container()["env"]}
    assert env["AIM_SYSTEM_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    monkeypatch.setenv("POD_NAME", "aim-engine-controller-manager-abc12")
    assert default_identity() == "aim-engine-controller-manager-abc12"  # the leader identity is the pod name


def test_pod_is_locked_down():
    pod = deployment()["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    sc = container()["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not pod.get("hostNetwork") and not pod.get("hostPID")
    mounts = {m["mountPath"] for m in container().get("volumeMounts", [])}
    assert "/tmp" in mounts  # scratch space, the root filesystem being read-only


def test_readme_explains_the_install_order():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Installing in a cluster", 1)[1].split("\n## ", 1)[0]
    crds = section.index("kubectl apply -f aim_core/crds/aim.eai.amd.com_crds.yaml")
    assert crds < section.index("kubectl apply -k deploy/")


# ------------------------------------------------------ tests: artifact status updater (F72)


def test_status_updater_role_lets_download_pods_patch_artifact_status_only():
    from aim_core.artifact.children import STATUS_UPDATER, status_updater_binding

    role = named("ClusterRole", STATUS_UPDATER_ROLE)
    assert role["rules"] == [
        {"apiGroups": ["aim.eai.amd.com"], "resources": ["aimartifacts/status"], "verbs": ["get", "patch", "update"]}
    ]
    binding = status_updater_binding("team")
    assert STATUS_UPDATER == STATUS_UPDATER_ROLE == binding["roleRef"]["name"]
    assert binding["roleRef"]["kind"] == "ClusterRole"


def test_operator_may_bind_the_status_updater_role():
    """RBAC escalation check: binding a ClusterRole needs `bind` on it or all of its permissions."""
    rules = cluster_rules()
    has_bind = grants(rules, ("rbac.authorization.k8s.io", "clusterroles", "bind", STATUS_UPDATER_ROLE))
    holds_all = all(
        grants(rules, ("aim.eai.amd.com", "aimartifacts/status", verb, None)) for verb in ("get", "patch", "update")
    )
    assert has_bind and holds_all
    assert not grants(rules, ("rbac.authorization.k8s.io", "clusterroles", "bind", "cluster-admin"))
    assert grants(rules, ("rbac.authorization.k8s.io", "rolebindings", "create", None))


def test_the_source_scan_finds_artifact_children_and_evictions():
    found = scan_source()
    for key in [
        ("JOBS", "create"),
        ("PVCS", "create"),
        ("ROLE_BINDINGS", "create"),
        ("JOBS", "delete"),
        ("ARTIFACTS", "delete"),
    ]:
        assert key in found, key


# Verbs granted beyond what the code sends, each with its reason. Everything else must be sent.
VERB_ALLOWANCES = {
    # the OwnerReferencesPermissionEnforcement admission plugin checks update on the owner's finalizers
    **{("aim.eai.amd.com", f"{r.plural}/finalizers"): {"update", "patch"} for r in res.AIM_RESOURCES},
    # our own API: create and delete on all kinds, also those whose controllers are still to come
    **{("aim.eai.amd.com", r.plural): {"create", "delete"} for r in res.AIM_RESOURCES},
    # children deleted through a resource held in a variable (routing or a runtime turned off)
    ("serving.kserve.io", "inferenceservices"): {"delete"},
    ("gateway.networking.k8s.io", "httproutes"): {"delete"},
    ("rbac.authorization.k8s.io", "clusterroles"): {"bind"},  # the status-updater role (see role.yaml)
    ("aim.eai.amd.com", "aimartifacts/status"): {"get", "update"},  # held to bind that role
    ("apiextensions.k8s.io", "customresourcedefinitions"): {"get"},  # kopf's resource scanning
}


def unused_verbs(rules: list[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """Granted verbs the code does not send and no allowance explains, by (group, resource)."""
    cluster, _ = code_needs()
    needed: dict[tuple[str, str], set[str]] = {}
    for group, resource, verb, _name in cluster:
        needed.setdefault((group, resource), set()).add(verb)
    unused = {}
    for rule in rules:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                extra = (
                    set(rule["verbs"])
                    - needed.get((group, resource), set())
                    - VERB_ALLOWANCES.get((group, resource), set())
                )
                if extra:
                    unused[(group, resource)] = sorted(extra)
    return unused


def test_cluster_role_grants_only_the_verbs_the_code_sends():
    """Least privilege, verbs included: e.g. no `update` where the code only patches (issue 13)."""
    assert unused_verbs(cluster_rules()) == {}


def test_an_unused_verb_is_caught():
    reduced = copy.deepcopy(cluster_rules())
    for rule in reduced:
        if "httproutes" in rule["resources"]:
            rule["verbs"] = [*rule["verbs"], "update"]
    assert unused_verbs(reduced) == {("gateway.networking.k8s.io", "httproutes"): ["update"]}
