"""Credentials in container log lines are redacted before they reach conditions and Events (issue 18)."""

from __future__ import annotations

import pytest

from aim_core.reconcile.redaction import MARK, redact
from aim_core.reconcile.workloads import inspect_pods
from aim_testing.leaks import SecretScanner

HF = "hf_AbCdEfGhIjKlMnOpQrStUv1234"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PASSWORD = "s3cr3t-Pa55w0rd"
OPENAI = "sk-proj-4fQ9xZ2LmN7pR1sT8uV3wY6aB0cD5eF"


def scanner() -> SecretScanner:
    return (
        SecretScanner()
        .add("hf token", HF)
        .add("jwt", JWT)
        .add("aws secret", AWS_SECRET)
        .add("password", PASSWORD)
        .add("aws key id", "AKIAIOSFODNN7EXAMPLE")
        .add("gh", "ghp_" + "x1" * 12)
        .add("openai key", OPENAI)
        .add("bench key", "k3y-0f-The-Endpoint")
    )


@pytest.mark.parametrize(
    "line, kept",
    [
        (f"huggingface_hub.errors.HfHubHTTPError: 401 Client Error (token {HF})", "401 Client Error"),
        (f"requests sent 'Authorization: Bearer {JWT}'", "Authorization: Bearer"),
        (f"urllib3 error for https://alice:{PASSWORD}@registry.example.com/v2/", "https://alice:"),
        (
            f"env: AWS_SECRET_ACCESS_KEY={AWS_SECRET} AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE region=us-east-1",
            "region=us-east-1",
        ),
        (f"settings {{'hf_token': '{HF}', \"password\": \"{PASSWORD}\"}}", "settings"),
        (f"HF_TOKEN: {HF}", "HF_TOKEN: "),
        (f"git clone https://{'ghp_' + 'x1' * 12}@github.com/org/repo failed", "github.com/org/repo"),
        (
            f"GET https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F2026&X-Amz-Signature={PASSWORD}",
            "X-Amz-Signature=",
        ),
        (f"Authorization: Basic {'YWxpY2U6' + 'czNjcjN0LVBhNTV3MHJk'}", "Authorization: Basic"),
        # the command line genai-bench logs, with the key the operator passes expanded by the shell
        (
            "INFO genai_bench.cli: genai-bench benchmark --api-backend openai --api-base http://svc.ns:80 "
            "--api-model-name qwen --api-key k3y-0f-The-Endpoint --experiment-base-dir /reports",
            "--experiment-base-dir /reports",
        ),
        (f"+ vllm serve /models/qwen --hf-token {HF} --port 8000", "--port 8000"),
        (f"python3 download.py --hf-token={HF} --repo org/model", "--repo org/model"),
        (f"launcher: args ['--api-key', '{PASSWORD}', '--port', '8000']", "'--port', '8000'"),
        (f'tool --token "{PASSWORD}" --password={PASSWORD} --verbose', "--verbose"),
        (f"openai.AuthenticationError: Error code: 401 - Incorrect API key provided: {OPENAI}", "Error code: 401"),
        (f"OPENAI_API_KEY is {OPENAI}; retrying", "retrying"),
    ],
)
def test_credentials_in_a_log_line_are_redacted_and_the_rest_is_kept(line, kept):
    out = redact(line)
    assert MARK in out and kept in out, out
    assert scanner().scan_text("redacted line", out) == [], out


@pytest.mark.parametrize(
    "line",
    [
        "ERROR: S3 error: 404 (NoSuchBucket): The specified bucket does not exist",
        "OSError: [Errno 28] No space left on device",
        "token expired; log in again",
        "vllm: max_tokens=4096 tokenizer=Qwen/Qwen3-8B",
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "vllm serve /models/qwen --max-tokens 4096 --tokenizer Qwen/Qwen3-8B --port 8000",
        "mounted /dev/sdb1 at disk-cache-0123456789abcdefghij; task-runner-0123456789abcdefghij started",
        "genai-bench --api-key none --max-requests-per-run 10",
    ],
)
def test_lines_without_credentials_are_unchanged(line):
    assert redact(line) == line


def test_a_failed_pod_s_condition_message_carries_no_credential():
    pod = {
        "metadata": {"name": "dl-1", "namespace": "ns"},
        "status": {
            "phase": "Failed",
            "containerStatuses": [{"name": "download", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}],
        },
    }
    log = f"starting\nusing token {HF}\nHTTP 401 for https://alice:{PASSWORD}@hub.example.com/x\n"
    health = inspect_pods([pod], (), {"dl-1": redact(log)})
    assert "401" in health.message and scanner().scan_text("condition", health.message) == []
