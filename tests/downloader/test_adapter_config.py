"""The downloader reads a LoRA adapter's ``adapter_config.json`` and reports it on the artifact (issue 22).

Real processes against the fake Hub and moto's S3 server, reporting to the API emulator.
"""

from __future__ import annotations

import json
import os

import pytest

from aim_core.downloader.adapters import parse_adapter_config
from aim_testing.hubserver import HubServer
from tests.downloader.conftest import NAMESPACE, Cluster, base_env, run

CONFIG = {
    "base_model_name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
    "r": 16,
    "lora_alpha": 32,
    "peft_type": "LORA",
    "target_modules": ["q_proj", "v_proj"],
}
ADAPTER = {"adapter_config.json": json.dumps(CONFIG).encode(), "adapter_model.safetensors": os.urandom(300_000)}


def hub_env(tmp_path, hub: HubServer, cluster: Cluster, name: str) -> dict[str, str]:
    return base_env(
        tmp_path,
        HF_ENDPOINT=hub.url,
        ARTIFACT_NAME=name,
        ARTIFACT_NAMESPACE=NAMESPACE,
        AIM_DOWNLOADER_PROTOCOL="HF_TRANSFER",
        **cluster.env(),
    )


async def test_a_hub_adapter_reports_its_base_model_and_rank(tmp_path, hub, cluster):
    hub.add_repo("org/sql-lora", ADAPTER)
    cluster.artifact("sql-lora", "hf://org/sql-lora")

    result = await run(["download", "hf://org/sql-lora"], hub_env(tmp_path, hub, cluster, "sql-lora"))

    assert result.code == 0, result.stderr
    status = cluster.status("sql-lora")
    assert status["adapter"] == {"baseModel": "meta-llama/Llama-3.1-8B-Instruct", "rank": 16, "alpha": 32}
    assert status["download"]["message"].startswith("Complete")
    assert (tmp_path / "cache" / "adapter_model.safetensors").read_bytes() == ADAPTER["adapter_model.safetensors"]


async def test_model_weights_without_an_adapter_config_report_no_adapter(tmp_path, hub, cluster):
    hub.add_repo("org/llama", {"config.json": b'{"model_type": "llama"}', "model.safetensors": os.urandom(1000)})
    cluster.artifact("llama", "hf://org/llama")

    result = await run(["download", "hf://org/llama"], hub_env(tmp_path, hub, cluster, "llama"))

    assert result.code == 0, result.stderr
    assert "adapter" not in cluster.status("llama")


async def test_an_unusable_adapter_config_is_reported_as_a_problem(tmp_path, hub, cluster):
    hub.add_repo(
        "org/broken",
        {"adapter_config.json": b'{"peft_type": "LORA", "r": "sixteen"}', "adapter_model.safetensors": b"x" * 100},
    )
    cluster.artifact("broken", "hf://org/broken")

    result = await run(["download", "hf://org/broken"], hub_env(tmp_path, hub, cluster, "broken"))

    assert result.code == 0, result.stderr  # the files are there; the operator refuses to serve them
    assert "no positive integer rank" in cluster.status("broken")["adapter"]["problem"]


async def test_an_s3_adapter_reports_its_base_model_and_rank(tmp_path, s3_server, s3, cluster):
    s3.create_bucket(Bucket="adapters")
    config = {**CONFIG, "r": 64, "base_model_name_or_path": "Qwen/Qwen2.5-7B"}
    s3.put_object(Bucket="adapters", Key="qwen/chat/adapter_config.json", Body=json.dumps(config).encode())
    s3.put_object(Bucket="adapters", Key="qwen/chat/adapter_model.safetensors", Body=os.urandom(200_000))
    cluster.artifact("chat", "s3://adapters/qwen/chat")
    env = base_env(
        tmp_path,
        AWS_ENDPOINT_URL=s3_server,
        AWS_ACCESS_KEY_ID="AKIATESTING",
        AWS_SECRET_ACCESS_KEY="testing-secret",
        AWS_EC2_METADATA_DISABLED="true",
        ARTIFACT_NAME="chat",
        ARTIFACT_NAMESPACE=NAMESPACE,
        **cluster.env(),
    )

    result = await run(["download", "s3://adapters/qwen/chat"], env)

    assert result.code == 0, result.stderr
    assert cluster.status("chat")["adapter"] == {"baseModel": "Qwen/Qwen2.5-7B", "rank": 64, "alpha": 32}


async def test_check_size_prints_a_hub_adapters_config_with_the_size(tmp_path, hub):
    hub.add_repo("org/sql-lora", ADAPTER)
    hub.add_repo("org/llama", {"config.json": b'{"model_type": "llama"}', "model.safetensors": b"w" * 1000})
    env = base_env(tmp_path, HF_ENDPOINT=hub.url)

    adapter = await run(["check-size", "hf://org/sql-lora"], env)
    model = await run(["check-size", "hf://org/llama"], env)

    assert adapter.code == 0, adapter.stderr
    assert json.loads(adapter.stdout.strip().splitlines()[-1]) == {
        "url": "hf://org/sql-lora",
        "sizeBytes": sum(len(v) for v in ADAPTER.values()),
        "adapter": {"baseModel": "meta-llama/Llama-3.1-8B-Instruct", "rank": 16, "alpha": 32},
    }
    assert model.code == 0, model.stderr
    assert "adapter" not in json.loads(model.stdout.strip().splitlines()[-1])


async def test_check_size_prints_an_s3_adapters_config_with_the_size(tmp_path, s3_server, s3):
    s3.create_bucket(Bucket="adapters-check")
    s3.put_object(
        Bucket="adapters-check",
        Key="chat/adapter_config.json",
        Body=json.dumps({**CONFIG, "r": 8, "base_model_name_or_path": "Qwen/Qwen2.5-7B"}).encode(),
    )
    s3.put_object(Bucket="adapters-check", Key="chat/adapter_model.safetensors", Body=b"w" * 5000)
    env = base_env(
        tmp_path,
        AWS_ENDPOINT_URL=s3_server,
        AWS_ACCESS_KEY_ID="AKIATESTING",
        AWS_SECRET_ACCESS_KEY="testing-secret",
        AWS_EC2_METADATA_DISABLED="true",
    )

    result = await run(["check-size", "s3://adapters-check/chat"], env)

    assert result.code == 0, result.stderr
    line = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["adapter"] == {"baseModel": "Qwen/Qwen2.5-7B", "rank": 8, "alpha": 32}
    assert line["sizeBytes"] > 5000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"r": 8, "base_model_name_or_path": "org/base"}', {"rank": 8, "baseModel": "org/base"}),
        ('{"r": 8, "peft_type": "PROMPT_TUNING"}', "PROMPT_TUNING adapter"),
        ("not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"r": true}', "no positive integer rank"),
        ('{"r": 0}', "no positive integer rank"),
    ],
)
def test_adapter_config_parsing(text, expected):
    info = parse_adapter_config(text)
    if isinstance(expected, dict):
        assert info == expected
    else:
        assert expected in info["problem"]
