"""Pod, Job and PVC inspection (F12) over realistic objects as the API server returns them."""

from __future__ import annotations

import copy

import pytest

from aim_core import Category, State, inspect_job, inspect_pods, inspect_pvc
from aim_core.reconcile.workloads import classify_log
from aim_core.runtime.storeform import pod_essentials

NS = "llm"
IMAGE = "docker.io/amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"


class PodBuilder:
    """A predictor pod, Pending with nothing known, made worse or better step by step."""

    def __init__(self, name: str = "qwen-1080a608-predictor-6d9f-abcde") -> None:
        self.obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "kserve-container", "image": IMAGE}]},
            "status": {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
            },
        }

    @property
    def name(self) -> str:
        return self.obj["metadata"]["name"]

    def _set_container(self, **fields) -> PodBuilder:
        status = {"name": "kserve-container", "image": IMAGE, "ready": False, "restartCount": 0, **fields}
        self.obj["status"]["containerStatuses"] = [status]
        return self

    def scheduled(self) -> PodBuilder:
        self.obj["spec"]["nodeName"] = "gpu-node-1"
        self.obj["status"]["conditions"] = [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Initialized", "status": "True"},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
        ]
        return self._set_container(state={"waiting": {"reason": "ContainerCreating"}})

    def waiting(self, reason: str, message: str = "") -> PodBuilder:
        self.scheduled()
        return self._set_container(state={"waiting": {"reason": reason, "message": message}})

    def running(self) -> PodBuilder:
        self.scheduled()
        self.obj["status"]["phase"] = "Running"
        return self._set_container(state={"running": {"startedAt": "2025-01-01T10:00:00Z"}}, started=True)

    def ready(self) -> PodBuilder:
        self.running()
        for cond in self.obj["status"]["conditions"]:
            if cond["type"] == "Ready":
                cond.update(status="True", reason=None)
        self.obj["status"]["containerStatuses"][0]["ready"] = True
        return self

    def crash_looping(self, exit_code: int = 1, reason: str = "Error") -> PodBuilder:
        self.running()
        return self._set_container(
            state={"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}},
            lastState={"terminated": {"exitCode": exit_code, "reason": reason}},
            restartCount=4,
        )

    def failed(self, exit_code: int = 1, reason: str = "Error", pod_reason: str | None = None) -> PodBuilder:
        self.scheduled()
        self.obj["status"]["phase"] = "Failed"
        if pod_reason:
            self.obj["status"]["reason"] = pod_reason
            self.obj["status"]["message"] = f"Pod {pod_reason.lower()} by the kubelet"
        return self._set_container(state={"terminated": {"exitCode": exit_code, "reason": reason}})

    def succeeded(self) -> PodBuilder:
        self.scheduled()
        self.obj["status"]["phase"] = "Succeeded"
        return self._set_container(state={"terminated": {"exitCode": 0, "reason": "Completed"}})

    def terminating(self) -> PodBuilder:
        self.obj["metadata"]["deletionTimestamp"] = "2025-01-01T10:05:00Z"
        return self

    def build(self) -> dict:
        return copy.deepcopy(self.obj)


def pod(name: str = "qwen-1080a608-predictor-6d9f-abcde") -> PodBuilder:
    return PodBuilder(name)


def event(target: str, reason: str, message: str, at: str, *, kind: str = "Pod", type_: str = "Warning") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{target}.{reason}.{at}", "namespace": NS},
        "involvedObject": {"kind": kind, "name": target, "namespace": NS},
        "reason": reason,
        "message": message,
        "type": type_,
        "lastTimestamp": at,
    }


P = "qwen-1080a608-predictor-6d9f-abcde"
SCHEDULING = "0/4 nodes are available: 4 Insufficient amd.com/gpu. preemption: 0/4 nodes are available."
AUTH_PULL = (
    'Failed to pull image "ghcr.io/acme/private:1": failed to authorize: failed to fetch anonymous token: '
    "unexpected status from GET request to https://ghcr.io/token: 401 Unauthorized"
)
MISSING_PULL = (
    'Failed to pull image "docker.io/acme/nope:9": rpc error: code = NotFound desc = failed to resolve '
    'reference "docker.io/acme/nope:9": docker.io/acme/nope:9: not found'
)
TIMEOUT_PULL = 'Failed to pull image "quay.io/acme/x:1": dial tcp 10.0.0.1:443: i/o timeout'


@pytest.mark.parametrize(
    ("pods", "events", "logs", "state", "reason", "category", "in_message"),
    [
        pytest.param([], [], {}, State.PROGRESSING, "NoPods", None, "No pods", id="no-pods"),
        pytest.param(
            [pod().terminating().ready()], [], {}, State.PROGRESSING, "NoPods", None, "", id="only-terminating-pods"
        ),
        pytest.param([pod().ready()], [], {}, State.READY, "PodsReady", None, "1 of 1", id="ready"),
        pytest.param(
            [pod("a").ready(), pod("b").scheduled()],
            [],
            {},
            State.READY,
            "PodsReady",
            None,
            "1 of 2",
            id="scaling-out-still-serving",
        ),
        pytest.param([pod().succeeded()], [], {}, State.READY, "PodsReady", None, "", id="job-pod-succeeded"),
        pytest.param(
            [pod().running()], [], {}, State.STARTING, "PodsStarting", None, "not ready", id="running-not-ready"
        ),
        pytest.param(
            [pod()],
            [event(P, "FailedScheduling", SCHEDULING, "2025-01-01T10:00:00Z")],
            {},
            State.PENDING,
            "FailedScheduling",
            None,
            "Insufficient amd.com/gpu",
            id="pending-no-gpu",
        ),
        pytest.param(
            [pod().scheduled()],
            [
                event(P, "FailedScheduling", SCHEDULING, "2025-01-01T10:00:00Z"),
                event(P, "Scheduled", "Successfully assigned", "2025-01-01T10:01:00Z", type_="Normal"),
                event(P, "FailedMount", 'MountVolume.SetUp failed for volume "qwen-cache"', "2025-01-01T10:02:00Z"),
            ],
            {},
            State.PENDING,
            "FailedMount",
            None,
            "qwen-cache",
            id="pending-mount-after-scheduling",
        ),
        pytest.param(
            [pod().scheduled()],
            # Stale: the pod has been scheduled since.
            [event(P, "FailedScheduling", SCHEDULING, "2025-01-01T10:00:00Z")],
            {},
            State.PENDING,
            "PodsPending",
            None,
            "",
            id="stale-scheduling-event-ignored",
        ),
        pytest.param(
            [pod().scheduled()],
            [
                event(P, "FailedCreatePodSandBox", "failed to setup network", "2025-01-01T10:00:00Z"),
                event(P, "Pulling", f'Pulling image "{IMAGE}"', "2025-01-01T10:03:00Z", type_="Normal"),
            ],
            {},
            State.PROGRESSING,
            "Pulling",
            None,
            "Pulling image",
            id="pulling-is-newest",
        ),
        pytest.param(
            [pod().scheduled()],
            [
                event(P, "Pulling", f'Pulling image "{IMAGE}"', "2025-01-01T10:03:00Z", type_="Normal"),
                event(P, "FailedAttachVolume", "Multi-Attach error", "2025-01-01T10:04:00.500000Z"),
            ],
            {},
            State.PENDING,
            "FailedAttachVolume",
            None,
            "Multi-Attach",
            id="attach-failure-newer-than-pull-mixed-time-formats",
        ),
        pytest.param(
            [pod()],
            [event("someone-else", "FailedScheduling", SCHEDULING, "2025-01-01T10:00:00Z")],
            {},
            State.PENDING,
            "PodsPending",
            None,
            "",
            id="events-of-other-pods-ignored",
        ),
        pytest.param(
            [pod().waiting("ImagePullBackOff", 'Back-off pulling image "ghcr.io/acme/private:1"')],
            [event(P, "Failed", AUTH_PULL, "2025-01-01T10:00:00Z")],
            {},
            State.FAILED,
            "ImagePullAuthFailure",
            Category.AUTH,
            "401 Unauthorized",
            id="pull-auth-from-event",
        ),
        pytest.param(
            [pod().waiting("ErrImagePull", MISSING_PULL)],
            [],
            {},
            State.FAILED,
            "ImageNotFound",
            Category.MISSING_UPSTREAM,
            "not found",
            id="pull-not-found",
        ),
        pytest.param(
            [pod().waiting("ErrImagePull", TIMEOUT_PULL)],
            [],
            {},
            State.DEGRADED,  # a registry timeout is infrastructure: retried, not Failed
            "ImagePullBackOff",
            Category.INFRASTRUCTURE,
            "i/o timeout",
            id="pull-other",
        ),
        pytest.param(
            # Pull problems are reported before a crashing sibling.
            [pod("a").crash_looping(), pod("b").waiting("ErrImagePull", MISSING_PULL)],
            [],
            {},
            State.FAILED,
            "ImageNotFound",
            Category.MISSING_UPSTREAM,
            "",
            id="pull-before-failure",
        ),
        pytest.param(
            [pod().crash_looping(exit_code=137, reason="OOMKilled")],
            [],
            {},
            State.FAILED,
            "PodOOMKilled",
            Category.RESOURCE_EXHAUSTION,
            "OOMKilled",
            id="oom-crash-loop",
        ),
        pytest.param(
            [pod().failed()],
            [],
            {
                P: "Downloading...\nhuggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. Repository Not Found for url: https://huggingface.co/api/models/acme/nope\n"
            },
            State.FAILED,
            "SourceNotFound",
            Category.INVALID_SPEC,
            "Log excerpt: huggingface_hub.errors.RepositoryNotFoundError",
            id="log-not-found",
        ),
        pytest.param(
            [pod().failed()],
            [],
            {
                P: "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.\n"
            },
            State.FAILED,
            "AuthError",
            Category.AUTH,
            "Log excerpt: Cannot access gated repo",
            id="log-hf-gated",
        ),
        pytest.param(
            [pod().failed()],
            [],
            {P: "botocore.exceptions.ClientError: An error occurred (InvalidAccessKeyId) when calling GetObject\n"},
            State.FAILED,
            "AuthError",
            Category.AUTH,
            "InvalidAccessKeyId",
            id="log-s3-auth",
        ),
        pytest.param(
            [pod().crash_looping()],
            [],
            {P: "writing shard 3/8\nOSError: [Errno 28] No space left on device: '/cache/model.safetensors'\n"},
            State.FAILED,
            "StorageFull",
            Category.RESOURCE_EXHAUSTION,
            "Log excerpt: OSError: [Errno 28] No space left on device",
            id="log-storage-full",
        ),
        pytest.param(
            [pod().failed()],
            [],
            {
                P: 'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:llm:default" cannot patch resource "aimartifacts"\nNoSuchKey\n'
            },
            State.FAILED,
            "PodFailed",
            Category.UNKNOWN,
            "exited with code 1",
            id="log-infra-hit-ends-scan",
        ),
        pytest.param(
            [pod().failed()],
            [],
            {P: "a\nb\nc\nd\nTraceback: ValueError: bad config\n"},
            State.FAILED,
            "PodFailed",
            Category.UNKNOWN,
            "Log excerpt: c | d | Traceback: ValueError: bad config",
            id="no-pattern-last-three-lines",
        ),
        pytest.param(
            [pod().failed(exit_code=137, pod_reason="Evicted")],
            [],
            {},
            State.DEGRADED,
            "PodEvicted",
            Category.INFRASTRUCTURE,
            "evicted",
            id="evicted",
        ),
        pytest.param(
            [pod().failed(pod_reason="DeadlineExceeded")],
            [],
            {},
            State.FAILED,
            "PodDeadlineExceeded",
            Category.INVALID_SPEC,
            "deadline",
            id="deadline",
        ),
    ],
)
def test_inspect_pods(pods, events, logs, state, reason, category, in_message):
    health = inspect_pods([p.build() for p in pods], events, logs)
    assert (health.state, health.reason, health.category) == (state, reason, category), health
    assert in_message in health.message
    # The operator's store keeps pods without their containers' spec: inspection reads the same from them.
    assert inspect_pods([pod_essentials(p.build()) for p in pods], events, logs) == health


def test_crash_loop_that_recovered_is_not_a_failure():
    recovered = pod().ready().build()
    recovered["status"]["containerStatuses"][0]["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error"}}
    assert inspect_pods([recovered]).reason == "PodsReady"


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        ("", None),
        ("all good", None),
        ("S3 error: 403 Forbidden while reading s3://bucket/model", "AuthError"),
        ("NoSuchBucket: the bucket does not exist", "SourceNotFound"),
        ("Access to model meta-llama/Llama-3.1-8B is restricted.", "AuthError"),
        ("disk quota exceeded", "StorageFull"),
        # Not-found lines win over auth lines, whatever their order in the log.
        ("401 Unauthorized\nmodel qwen/nope not found", "SourceNotFound"),
    ],
)
def test_classify_log(log, expected):
    hit = classify_log(log)
    assert (hit[1] if hit else None) == expected


def test_only_the_last_fifty_lines_are_scanned():
    log = "No space left on device\n" + "\n".join(f"line {i}" for i in range(50))
    assert classify_log(log) is None


# ---------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------


def job(*conditions: dict, active: int = 0, failed: int = 0) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "discover-qwen-7f3a", "namespace": NS},
        "status": {"conditions": list(conditions), "active": active, "failed": failed},
    }


@pytest.mark.parametrize(
    ("obj", "state", "reason", "category"),
    [
        (job({"type": "Complete", "status": "True"}), State.READY, "Ready", None),
        (
            job({"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}),
            State.READY,
            "Ready",
            None,
        ),
        (
            job(
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                }
            ),
            State.FAILED,
            "JobBackoffLimitExceeded",
            Category.INVALID_SPEC,
        ),
        (
            job(
                {
                    "type": "FailureTarget",
                    "status": "True",
                    "reason": "DeadlineExceeded",
                    "message": "Job was active longer than specified deadline",
                }
            ),
            State.FAILED,
            "JobDeadlineExceeded",
            Category.INVALID_SPEC,
        ),
        (
            job(
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "PodFailurePolicy",
                    "message": "Pod was evicted due to node pressure",
                }
            ),
            State.DEGRADED,
            "JobEvicted",
            Category.INFRASTRUCTURE,
        ),
        (
            job({"type": "Failed", "status": "True", "reason": "MaxFailedIndexesExceeded"}),
            State.FAILED,
            "JobFailed",
            Category.UNKNOWN,
        ),
        (job(active=1, failed=1), State.PROGRESSING, "JobRunning", None),
        (job({"type": "Failed", "status": "False"}, active=1), State.PROGRESSING, "JobRunning", None),
    ],
)
def test_inspect_job(obj, state, reason, category):
    health = inspect_job(obj)
    assert (health.state, health.reason, health.category) == (state, reason, category)
    assert "discover-qwen-7f3a" in health.message


# ---------------------------------------------------------------------------
# PVCs
# ---------------------------------------------------------------------------


def pvc(phase: str | None) -> dict:
    obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "aim-cache-qwen", "namespace": NS},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "70Gi"}}},
    }
    if phase:
        obj["status"] = {"phase": phase}
    return obj


@pytest.mark.parametrize(
    ("obj", "events", "state", "reason", "category", "in_message"),
    [
        (pvc("Bound"), [], State.READY, "Ready", None, "bound"),
        (pvc("Lost"), [], State.DEGRADED, "PvcLost", Category.INFRASTRUCTURE, "lost"),
        (pvc(None), [], State.PROGRESSING, "PvcPending", None, "pending"),
        (
            pvc("Pending"),
            [
                event(
                    "aim-cache-qwen",
                    "ProvisioningFailed",
                    'storageclass.storage.k8s.io "rwx" not found',
                    "2025-01-01T10:00:00Z",
                    kind="PersistentVolumeClaim",
                ),
            ],
            State.FAILED,
            "PvcProvisioningFailed",
            Category.INFRASTRUCTURE,
            '"rwx" not found',
        ),
        (
            pvc("Pending"),
            [
                event(
                    "aim-cache-qwen",
                    "ProvisioningFailed",
                    "timeout",
                    "2025-01-01T10:00:00Z",
                    kind="PersistentVolumeClaim",
                ),
                event(
                    "aim-cache-qwen",
                    "Provisioning",
                    "External provisioner is provisioning volume",
                    "2025-01-01T10:01:00Z",
                    kind="PersistentVolumeClaim",
                    type_="Normal",
                ),
            ],
            State.PROGRESSING,
            "PvcPending",
            None,
            "provisioning volume",
        ),
    ],
)
def test_inspect_pvc(obj, events, state, reason, category, in_message):
    health = inspect_pvc(obj, events)
    assert (health.state, health.reason, health.category) == (state, reason, category)
    assert in_message in health.message


def test_pod_failed_reads_the_phase_and_non_zero_exits_but_leaves_oom_to_its_own_reason():
    from aim_core.reconcile.workloads import pod_failed

    def term(**t):
        return {"status": {"phase": "Running", "containerStatuses": [{"state": {"terminated": t}}]}}

    assert pod_failed({"status": {"phase": "Failed"}})
    assert pod_failed(term(exitCode=1, reason="Error"))
    assert pod_failed({"status": {"containerStatuses": [{"lastState": {"terminated": {"exitCode": 2}}}]}})
    assert not pod_failed(term(exitCode=137, reason="OOMKilled"))
    assert not pod_failed(term(exitCode=0, reason="Completed"))
    assert not pod_failed({"status": {"phase": "Running"}})
