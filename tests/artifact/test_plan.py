"""AIMArtifact plan: size check, PVC sizing, RoleBinding, download Job, status (F70-F75)."""

from __future__ import annotations

import json

import pytest

from aim_core.artifact.plan import plan_artifact
from aim_core.artifact.quantities import display_size
from tests.artifact.builders import (
    BINDING,
    NOW,
    NS,
    cond,
    failed_pod,
    job,
    make_artifact,
    names,
    observed,
    pod,
    pvc,
    status_after,
    wanted,
)


def env_of(obj):
    container = obj["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in container["env"]}


# ---------------------------------------------------------------- size check (F70)


def test_unknown_size_runs_the_size_check_and_nothing_else():
    art = make_artifact(env=[{"name": "HF_TOKEN", "value": "t"}])
    plan = plan_artifact(art, observed())
    jobs = wanted(plan, "Job")
    assert [j["metadata"]["name"] for j in jobs] == [names(art)["check"]]
    assert not wanted(plan, "PersistentVolumeClaim") and not wanted(plan, "RoleBinding")
    spec = jobs[0]["spec"]
    assert spec["backoffLimit"] == 2 and spec["ttlSecondsAfterFinished"] == 300
    pod_spec = spec["template"]["spec"]
    container = pod_spec["containers"][0]
    assert container["command"] == ["/check-size.sh", "hf://Qwen/Qwen3-32B"]
    assert container["image"] == "registry.example/aim-downloader:1"
    assert env_of(jobs[0])["HF_TOKEN"] == "t"
    assert json.loads(env_of(jobs[0])["AIM_DOWNLOAD_FILTER"]) == {"exclude": ["*/*"]}
    labels = spec["template"]["metadata"]["labels"]
    assert labels["aim.eai.amd.com/component"] == "check-size" and labels["aim.eai.amd.com/cache.name"] == "qwen"
    assert pod_spec["securityContext"]["runAsNonRoot"] is True and pod_spec["securityContext"]["runAsUser"] == 1000
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    status = status_after(art, plan)
    assert status["status"] == "Progressing"
    assert cond(status, "CheckSizeJobReady")["reason"] == "ResourceNotReady"
    assert status["displaySize"] == "0 B"


def _checked(log: str):
    art = make_artifact()
    n = names(art)
    ob = observed(
        check_size_job=job(n["check"], complete=True),
        pods=(pod("cs-1", "check-size", n["check"], "Succeeded"),),
        logs={"cs-1": log},
    )
    return art, plan_artifact(art, ob)


def test_size_check_output_gives_the_size_and_the_pvc_follows():
    art, plan = _checked('downloading metadata\n{"url":"hf://Qwen/Qwen3-32B","sizeBytes":104857600}\n')
    assert plan.status["discoveredSizeBytes"] == 104857600
    assert plan.status["displaySize"] == "100 MiB"
    claims = wanted(plan, "PersistentVolumeClaim")
    assert len(claims) == 1 and claims[0]["spec"]["resources"]["requests"]["storage"] == "1Gi"
    assert plan.status["allocatedSize"] == "1Gi" and plan.status["headroomPercent"] == 10
    assert wanted(plan, "RoleBinding")[0]["roleRef"]["name"] == "aim-engine-artifact-status-updater"
    assert not [j for j in wanted(plan, "Job")]  # the download waits for the PVC to exist


def test_a_lora_adapters_config_from_the_size_check_goes_to_status_before_the_download():
    """Issue 22: the service can refuse an adapter of another base model before it is downloaded."""
    line = '{"url":"hf://acme/sql-lora","sizeBytes":4096,"adapter":{"baseModel":"org/base","rank":16,"x":1}}'
    _, plan = _checked(line + "\n")
    assert plan.status["adapter"] == {"baseModel": "org/base", "rank": 16}
    assert plan.status["discoveredSizeBytes"] == 4096
    _, plain = _checked('{"url":"hf://Qwen/Qwen3-32B","sizeBytes":104857600}\n')
    assert "adapter" not in plain.status


@pytest.mark.parametrize(
    "log",
    [
        "",
        "not json",
        '{"url":"x"}',
        '{"url":"x","sizeBytes":0}',
        '{"url":"x","sizeBytes":-5}',
        '{"url":"x","sizeBytes":1125899906842625}',
        '{"url":"x","sizeBytes":"12"}',
        'INFO checking\n{"url":"x"}',
        '{"url":"x","sizes":1}\nINFO done',
    ],
)
def test_bad_size_check_output_is_InvalidSizeOutput(log):
    art, plan = _checked(log)
    status = status_after(art, plan)
    assert cond(status, "CheckSizeOutputReady")["reason"] == "InvalidSizeOutput"
    assert status["status"] == "Failed" and cond(status, "Ready")["reason"] == "InvalidSizeOutput"
    assert not wanted(plan, "PersistentVolumeClaim") and "discoveredSizeBytes" not in plan.status
    assert plan.requeue_after is None  # no hot loop: a new check runs when the Job expires


@pytest.mark.parametrize(
    "log",
    [
        'INFO hf://Qwen/Qwen3-32B: 3 files\n{"url":"hf://Qwen/Qwen3-32B","sizeBytes":104857600}\n',  # stderr first
        '{"url":"hf://Qwen/Qwen3-32B","sizeBytes":104857600}\nINFO hf://Qwen/Qwen3-32B: 3 files\n',  # stdout first
        'INFO a\n{"url":"hf://Qwen/Qwen3-32B","sizeBytes":104857600}\nWARNING b {"x": 1}\nINFO c\n',
    ],
)
def test_the_size_result_is_found_whatever_order_the_streams_came_in(log):
    # check-size prints INFO on stderr and the JSON on stdout; the container log interleaves them (issue 18)
    art, plan = _checked(log)
    assert plan.status["discoveredSizeBytes"] == 104857600
    assert (cond(status_after(art, plan), "CheckSizeOutputReady") or {}).get("reason") != "InvalidSizeOutput"
    assert wanted(plan, "PersistentVolumeClaim")  # the volume is sized from it


def test_failed_size_check_pod_explains_itself():
    art = make_artifact()
    n = names(art)
    ob = observed(
        check_size_job=job(n["check"], failed="BackoffLimitExceeded"),
        pods=(failed_pod("cs-1", "check-size", n["check"]),),
        logs={"cs-1": "huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error"},
    )
    status = status_after(art, plan_artifact(art, ob))
    assert cond(status, "CheckSizeJobPodsReady")["reason"] == "SourceNotFound"
    assert status["status"] == "Failed"


# ---------------------------------------------------------------- PVC (F71)


@pytest.mark.parametrize(
    "size, headroom, expected",
    [
        ("100Mi", None, "1Gi"),
        ("64Gi", None, "71Gi"),
        ("10Gi", 0, "10Gi"),
        (str(1024**3 + 1), 0, "2Gi"),
        ("1G", 10, "2Gi"),
        ("20Gi", 50, "30Gi"),
        (1, None, "1Gi"),
    ],
)
def test_pvc_size_is_size_plus_headroom_rounded_up_to_whole_gib(size, headroom, expected):
    art = make_artifact(size=size)
    config = {"storage": {"pvcHeadroomPercent": headroom}} if headroom is not None else None
    plan = plan_artifact(art, observed(config))
    claim = wanted(plan, "PersistentVolumeClaim")[0]
    assert claim["spec"]["resources"]["requests"]["storage"] == expected
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert claim["metadata"]["name"] == names(art)["pvc"]


@pytest.mark.parametrize(
    "own, config, expected",
    [
        ("fast", {"storage": {"defaultStorageClassName": "slow"}}, "fast"),
        (None, {"storage": {"defaultStorageClassName": "slow"}}, "slow"),
        (None, {"defaultStorageClassName": "legacy"}, "legacy"),
        (None, None, None),
    ],
)
def test_storage_class_falls_back_to_the_runtime_config_then_the_cluster_default(own, config, expected):
    art = make_artifact(size="1Gi", **({"storageClassName": own} if own else {}))
    claim = wanted(plan_artifact(art, observed(config)), "PersistentVolumeClaim")[0]
    assert claim["spec"].get("storageClassName") == expected


def test_pvc_labels_mark_template_caches_and_the_source():
    plain = wanted(plan_artifact(make_artifact(size="1Gi"), observed()), "PersistentVolumeClaim")[0]
    assert plain["metadata"]["labels"] == {
        "aim.eai.amd.com/cache.name": "qwen",
        "aim.eai.amd.com/source-model": "qwen_qwen3-32b",
    }
    cached = make_artifact(size="1Gi").labels(**{"template-created": "true"})
    labels = wanted(plan_artifact(cached, observed()), "PersistentVolumeClaim")[0]["metadata"]["labels"]
    assert labels["aim.eai.amd.com/cache.type"] == "template-cache"


def test_existing_pvc_is_never_planned_again_and_reports_its_real_size():
    art = make_artifact(size="1Gi")
    n = names(art)
    plan = plan_artifact(art, observed(pvc=pvc(n["pvc"], storage="5Gi"), role_binding=BINDING))
    assert not wanted(plan, "PersistentVolumeClaim") and not wanted(plan, "RoleBinding")
    assert plan.status["allocatedSize"] == "5Gi"


def test_pending_pvc_does_not_hold_back_the_download_job():
    """A WaitForFirstConsumer class binds only once the download pod uses the claim."""
    art = make_artifact(size="1Gi")
    n = names(art)
    plan = plan_artifact(art, observed(pvc=pvc(n["pvc"], phase="Pending"), role_binding=BINDING))
    assert [j["metadata"]["name"] for j in wanted(plan, "Job")] == [n["download"]]
    assert cond(status_after(art, plan), "CachePvcReady")["reason"] == "PvcPending"


# ---------------------------------------------------------------- download Job (F72, F73)


def _ready_for_download(art, config=None, **fields):
    n = names(art)
    return plan_artifact(art, observed(config, pvc=pvc(n["pvc"]), role_binding=BINDING, **fields))


def test_download_job_waits_for_the_role_binding():
    art = make_artifact(size="1Gi")
    plan = plan_artifact(art, observed(pvc=pvc(names(art)["pvc"])))
    assert not wanted(plan, "Job")
    assert wanted(plan, "RoleBinding")[0]["subjects"] == [
        {"kind": "ServiceAccount", "name": "default", "namespace": NS}
    ]
    assert not any(d.owned for d in plan.apply if d.resource.kind == "RoleBinding")


def test_download_job_spec():
    art = make_artifact(size="1Gi", imagePullSecrets=[{"name": "pull"}])
    plan = _ready_for_download(art)
    (dl,) = wanted(plan, "Job")
    n = names(art)
    assert dl["metadata"]["name"] == n["download"]
    assert dl["metadata"]["labels"] == {
        "aim.eai.amd.com/cache.name": "qwen",
        "aim.eai.amd.com/cache.type": "artifact",
        "aim.eai.amd.com/component": "download",
    }
    spec = dl["spec"]
    assert spec["backoffLimit"] == 2 and spec["ttlSecondsAfterFinished"] == 600
    pod_spec = spec["template"]["spec"]
    assert spec["template"]["metadata"]["labels"]["aim.eai.amd.com/component"] == "download"
    assert pod_spec["restartPolicy"] == "Never" and pod_spec["imagePullSecrets"] == [{"name": "pull"}]
    assert pod_spec["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "runAsGroup": 1000,
        "fsGroup": 1000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    (container,) = pod_spec["containers"]
    assert container["name"] == "model-download" and container["args"] == ["hf://Qwen/Qwen3-32B"]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["volumeMounts"] == [{"name": "cache", "mountPath": "/cache"}]
    assert pod_spec["volumes"] == [{"name": "cache", "persistentVolumeClaim": {"claimName": n["pvc"]}}]
    assert [d.owned for d in plan.apply if d.resource.kind == "Job"] == [True]


def test_download_env_layers_defaults_then_runtime_config_then_artifact():
    art = make_artifact(
        size="2Gi", env=[{"name": "STALL_TIMEOUT", "value": "600"}, {"name": "HF_TOKEN", "value": "artifact"}]
    )
    config = {"env": [{"name": "HF_TOKEN", "value": "config"}, {"name": "AIM_DOWNLOADER_PROTOCOL", "value": "HTTP"}]}
    env = env_of(wanted(_ready_for_download(art, config), "Job")[0])
    assert env["HF_TOKEN"] == "artifact" and env["STALL_TIMEOUT"] == "600"
    assert env["AIM_DOWNLOADER_PROTOCOL"] == "HTTP"
    assert env["EXPECTED_SIZE_BYTES"] == str(2 * 1024**3)
    assert env["ARTIFACT_NAME"] == "qwen" and env["ARTIFACT_NAMESPACE"] == NS
    assert env["TARGET_DIR"] == env["MOUNT_PATH"] == "/cache" and env["HF_HOME"] == "/tmp/.hf"
    container = wanted(_ready_for_download(art, config), "Job")[0]["spec"]["template"]["spec"]["containers"][0]
    assert [e["name"] for e in container["env"]] == sorted(e["name"] for e in container["env"])


@pytest.mark.parametrize(
    "own, config, expected",
    [
        ({"include": ["*.safetensors"]}, {"include": ["*.bin"]}, {"include": ["*.safetensors"]}),
        (None, {"include": ["*.bin"], "exclude": ["x/*"]}, {"include": ["*.bin"], "exclude": ["x/*"]}),
        ({}, {"include": ["*.bin"]}, {}),
        (None, {}, {}),
        (None, None, {"exclude": ["*/*"]}),
    ],
)
def test_download_filter_is_the_same_for_size_check_and_download(own, config, expected):
    spec = {"downloadFilter": own} if own is not None else {}
    cfg = {"storage": {"downloadFilter": config}} if config is not None else None
    check = wanted(plan_artifact(make_artifact(**spec), observed(cfg)), "Job")[0]
    download = wanted(_ready_for_download(make_artifact(size="1Gi", **spec), cfg), "Job")[0]
    assert json.loads(env_of(check)["AIM_DOWNLOAD_FILTER"]) == expected
    assert env_of(download)["AIM_DOWNLOAD_FILTER"] == env_of(check)["AIM_DOWNLOAD_FILTER"]


@pytest.mark.parametrize(
    "own, expected",
    [
        (None, "registry.example/aim-downloader:1"),
        ("ghcr.io/silogen/aim-artifact-downloader:0.2.0", "registry.example/aim-downloader:1"),  # the CRD default
        ("my.registry/dl:2", "my.registry/dl:2"),
    ],
)
def test_download_image_is_the_artifact_s_else_the_operator_setting(own, expected):
    art = make_artifact(size="1Gi", **({"modelDownloadImage": own} if own else {}))
    container = wanted(_ready_for_download(art), "Job")[0]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == expected


def test_long_artifact_names_give_valid_child_names_and_labels():
    art = make_artifact(name="a" * 200 + ".b" * 20, size="1Gi")
    plan = _ready_for_download(art)
    children = wanted(plan, "Job") + wanted(
        plan_artifact(make_artifact(name=art["metadata"]["name"]), observed()), "Job"
    )
    children += wanted(plan_artifact(art, observed()), "PersistentVolumeClaim")
    assert len(children) == 3
    for child in children:
        assert len(child["metadata"]["name"]) <= 63
        for value in child["metadata"]["labels"].values():
            assert len(value) <= 63


# ---------------------------------------------------------------- status (F75)


def _downloading(art, *, job_kw=None, pods=(), logs=None):
    n = names(art)
    return plan_artifact(
        art,
        observed(
            pvc=pvc(n["pvc"]),
            role_binding=BINDING,
            download_job=job(n["download"], **(job_kw or {})),
            pods=pods,
            logs=logs or {},
        ),
    )


def test_running_download_is_progressing_with_a_slow_safety_look():
    art = make_artifact(size="1Gi").status(progress={"percentage": 40, "displayPercentage": "40 %"})
    plan = _downloading(art, pods=(pod("dl-1", "download", names(art)["download"], "Running"),))
    status = status_after(art, plan)
    assert status["status"] == "Progressing"
    assert cond(status, "DownloadComplete")["status"] == "False"
    assert cond(status, "DownloadComplete")["reason"] == "Downloading"
    assert plan.requeue_after == 60 and not wanted(plan, "Job")  # watches bring the rest


def test_progress_at_100_while_running_is_verifying():
    art = make_artifact(size="1Gi").status(progress={"percentage": 100, "displayPercentage": "100 %"})
    status = status_after(art, _downloading(art))
    assert (cond(status, "DownloadComplete")["status"], cond(status, "DownloadComplete")["reason"]) == (
        "True",
        "Verifying",
    )


def test_succeeded_job_makes_the_artifact_ready_with_full_progress():
    art = make_artifact(size="1Gi").status(
        progress={"percentage": 97, "downloadedBytes": 5}, download={"protocol": "XET", "attempt": 1}
    )
    plan = _downloading(
        art, job_kw={"complete": True}, pods=(pod("dl-1", "download", names(art)["download"], "Succeeded"),)
    )
    status = status_after(art, plan)
    assert status["status"] == "Ready" and cond(status, "Ready")["reason"] == "AllComponentsReady"
    assert cond(status, "DownloadComplete")["reason"] == "Verified"
    assert status["progress"] == {"percentage": 100, "displayPercentage": "100 %", "downloadedBytes": 5}
    assert status["download"] == {"protocol": "XET", "attempt": 1, "message": "Complete"}
    assert plan.requeue_after is None


@pytest.mark.parametrize(
    "log, pods_reason, ready_reason",
    [
        ("botocore.exceptions.ClientError: An error occurred (InvalidAccessKeyId)", "AuthError", "AuthError"),
        ("OSError: [Errno 28] No space left on device", "StorageFull", "StorageFull"),
        (
            "huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error: Repository Not Found",
            "SourceNotFound",
            "InvalidSpec",
        ),
        ("Traceback: something odd", "PodFailed", "PodFailed"),
    ],
)
def test_failed_download_is_classified_from_the_pod(log, pods_reason, ready_reason):
    art = make_artifact(size="1Gi").status(progress={"percentage": 30})
    dl = names(art)["download"]
    plan = _downloading(
        art, job_kw={"failed": "BackoffLimitExceeded"}, pods=(failed_pod("dl-1", "download", dl),), logs={"dl-1": log}
    )
    status = status_after(art, plan)
    assert status["status"] == "Failed"
    assert cond(status, "DownloadJobPodsReady")["reason"] == pods_reason
    assert cond(status, "DownloadJobReady")["reason"] == "JobBackoffLimitExceeded"
    assert cond(status, "Ready")["reason"] == ready_reason
    assert cond(status, "DownloadComplete")["reason"] == "Downloading"
    assert status["progress"]["displayPercentage"] == "N/A"
    assert plan.requeue_after is None and not wanted(plan, "Job")


def test_failure_after_full_progress_is_a_verification_failure():
    art = make_artifact(size="1Gi").status(progress={"percentage": 100})
    status = status_after(art, _downloading(art, job_kw={"failed": "BackoffLimitExceeded"}))
    assert cond(status, "DownloadComplete")["reason"] == "VerificationFailed"


def test_a_retrying_job_is_judged_by_its_newest_pod():
    art = make_artifact(size="1Gi")
    dl = names(art)["download"]
    old = failed_pod("dl-1", "download", dl)
    new = pod("dl-2", "download", dl, "Running", conditions=[{"type": "Ready", "status": "True"}])
    new["metadata"]["creationTimestamp"] = "2026-01-01T00:05:00Z"
    status = status_after(art, _downloading(art, pods=(old, new), logs={"dl-1": "No space left on device"}))
    assert status["status"] == "Progressing" and cond(status, "DownloadJobPodsReady")["status"] == "True"


def test_ready_artifact_stays_ready_after_its_job_expires():
    art = make_artifact(size="1Gi").downloaded()
    plan = plan_artifact(art, observed(pvc=pvc(names(art)["pvc"]), role_binding=BINDING))
    status = status_after(art, plan)
    assert status["status"] == "Ready" and not plan.apply
    assert cond(status, "DownloadComplete")["reason"] == "Verified"


def test_ready_artifact_whose_volume_was_deleted_downloads_again():
    art = make_artifact(size="1Gi").downloaded()
    plan = plan_artifact(art, observed(role_binding=BINDING))
    assert wanted(plan, "PersistentVolumeClaim")
    status = status_after(art, plan)
    assert status["status"] == "Progressing" and cond(status, "DownloadComplete") is None  # no Job yet


def test_a_completed_job_older_than_the_volume_is_removed_not_believed():
    art = make_artifact(size="1Gi")
    n = names(art)
    plan = plan_artifact(
        art,
        observed(
            pvc=pvc(n["pvc"], created="2026-01-01T01:00:00Z"),
            role_binding=BINDING,
            download_job=job(n["download"], complete=True),
        ),
    )
    assert [(d.resource.kind, d.name) for d in plan.delete] == [("Job", n["download"])]
    assert status_after(art, plan)["status"] != "Ready"


def test_mode_follows_owner_references():
    assert plan_artifact(make_artifact(), observed()).status["mode"] == "Shared"
    assert plan_artifact(make_artifact().owned(), observed()).status["mode"] == "Dedicated"


@pytest.mark.parametrize(
    "size, text",
    [
        (0, "0 B"),
        (512, "512 B"),
        (1536, "1.5 KiB"),
        (42 * 1024**3, "42 GiB"),
        (int(1.5 * 1024**4), "1.5 TiB"),
        (100 * 1024**2, "100 MiB"),
    ],
)
def test_display_size(size, text):
    assert display_size(size) == text


# ---------------------------------------------------------------- lastUsed


def test_last_used_is_refreshed_while_a_service_uses_the_artifact():
    art = make_artifact(size="1Gi").downloaded().status(lastUsed="2026-01-01T11:00:00Z")
    plan = plan_artifact(art, observed(pvc=pvc(names(art)["pvc"]), role_binding=BINDING, in_use=True))
    assert plan.status["lastUsed"] == NOW and plan.requeue_after == 300
    recent = make_artifact(size="1Gi").downloaded().status(lastUsed="2026-01-01T11:58:00Z")
    plan = plan_artifact(recent, observed(pvc=pvc(names(art)["pvc"]), role_binding=BINDING, in_use=True))
    assert "lastUsed" not in plan.status
    idle = plan_artifact(art, observed(pvc=pvc(names(art)["pvc"]), role_binding=BINDING))
    assert "lastUsed" not in idle.status and idle.requeue_after is None


# ---------------------------------------------------------------- placement (issue 20)


def test_size_check_and_download_jobs_follow_the_runtime_config_placement():
    placement = {
        "nodeSelector": {"example.com/pool": "storage"},
        "tolerations": [{"key": "example.com/dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}
                            ]
                        }
                    ]
                }
            }
        },
    }
    check = plan_artifact(make_artifact(), observed(placement))
    download = _ready_for_download(make_artifact(size="1Gi"), placement)
    for plan in (check, download):
        (job_,) = wanted(plan, "Job")
        pod_spec = job_["spec"]["template"]["spec"]
        assert {k: pod_spec[k] for k in placement} == placement  # as written: no GPU, nothing added
        assert f"placement: tolerations from AIMRuntimeConfig {NS}/default spec.tolerations" in plan.notes


def test_jobs_without_runtime_config_placement_have_none():
    (job_,) = wanted(_ready_for_download(make_artifact(size="1Gi")), "Job")
    assert not {"nodeSelector", "tolerations", "affinity"} & set(job_["spec"]["template"]["spec"])


def test_a_failed_read_becomes_a_condition_of_its_own_kind():
    from aim_core.reconcile.errors import ApiError, NetworkError, describe

    art = make_artifact()
    refused = describe(ApiError(403, "Forbidden", 'pods "x" is forbidden: cannot get resource "pods/log"'))
    unreachable = describe(NetworkError("refused", "connection refused"))

    plan = plan_artifact(art, observed(read_errors=(refused, unreachable)))

    assert [(i.category.value, i.reason) for i in plan.issues] == [
        (refused.category.value, refused.reason),
        (unreachable.category.value, unreachable.reason),
    ]
    assert "pods/log" in plan.issues[0].message
    status = status_after(art, plan)
    assert any("pods/log" in (c.get("message") or "") for c in status["conditions"])
