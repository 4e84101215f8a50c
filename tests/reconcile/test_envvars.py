import pytest

from aim_core.reconcile.envvars import deep_merge, engine_args_problems, layer_env, merge_env


def env(**values):
    return [{"name": k, "value": v} for k, v in values.items()]


SECRET = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}


@pytest.mark.parametrize(
    ("base", "overlay", "expected"),
    [
        (env(A="1", B="2"), env(B="3", C="4"), env(A="1", B="3", C="4")),  # in place, then appended
        (env(B="2", A="1"), env(A="9"), env(B="2", A="9")),  # position kept, no sorting here
        ([], env(A="1"), env(A="1")),
        (env(A="1"), [], env(A="1")),
        (env(HF_TOKEN="plain"), [SECRET], [SECRET]),  # whole entry replaced, valueFrom carried
        ([SECRET], env(HF_TOKEN="plain"), env(HF_TOKEN="plain")),
        (env(A="1"), env(A="2") + env(A="3"), env(A="3")),  # repeated overlay names collapse
        (
            env(AIM_ENGINE_ARGS='{"max-model-len": 4096, "opts": {"a": 1, "b": 2}}'),
            env(AIM_ENGINE_ARGS='{"opts": {"b": 3, "c": "<x>"}, "tp": 2.0}'),
            env(AIM_ENGINE_ARGS='{"max-model-len":4096,"opts":{"a":1,"b":3,"c":"\\u003cx\\u003e"},"tp":2}'),
        ),
        (
            env(AIM_ENGINE_ARGS='{"a": 1}'),
            env(AIM_ENGINE_ARGS="--max-model-len 4096"),  # not JSON: replaces
            env(AIM_ENGINE_ARGS="--max-model-len 4096"),
        ),
        (
            env(AIM_ENGINE_ARGS="not json"),
            env(AIM_ENGINE_ARGS='{"a": 1}'),
            env(AIM_ENGINE_ARGS='{"a": 1}'),  # untouched text when nothing merged
        ),
        (
            env(AIM_ENGINE_ARGS='["x"]'),
            env(AIM_ENGINE_ARGS='{"a": 1}'),
            env(AIM_ENGINE_ARGS='{"a": 1}'),  # arrays are not objects: replace
        ),
    ],
)
def test_merge_env(base, overlay, expected):
    assert merge_env(base, overlay) == expected


def test_merge_env_does_not_mutate_its_inputs():
    base, overlay = env(A="1"), env(A="2")
    merge_env(base, overlay)
    assert base == env(A="1") and overlay == env(A="2")


def test_layer_env_builds_the_inference_container_env():
    defaults = env(AIM_CACHE_PATH="/workspace/cache", VLLM_ENABLE_METRICS="true")
    runtime_config = env(HF_HOME="/cache/hf", AIM_ENGINE_ARGS='{"gpu-memory-utilization": 0.9}')
    template_spec = env(AIM_METRIC="latency", AIM_PRECISION="fp8")
    template_env = env(VLLM_ENABLE_METRICS="false")
    service_env = env(AIM_ENGINE_ARGS='{"max-model-len": 8192}', AIM_METRIC="throughput")
    result = layer_env(defaults, runtime_config, template_spec, template_env, None, service_env)
    assert result == env(
        AIM_CACHE_PATH="/workspace/cache",
        AIM_ENGINE_ARGS='{"gpu-memory-utilization":0.9,"max-model-len":8192}',
        AIM_METRIC="throughput",
        AIM_PRECISION="fp8",
        HF_HOME="/cache/hf",
        VLLM_ENABLE_METRICS="false",
    )


def test_deep_merge():
    low = {"a": {"x": 1, "y": {"k": 1}}, "b": 1}
    high = {"a": {"y": {"j": 2}}, "b": {"now": "object"}}
    assert deep_merge(low, high) == {"a": {"x": 1, "y": {"k": 1, "j": 2}}, "b": {"now": "object"}}
    assert low == {"a": {"x": 1, "y": {"k": 1}}, "b": 1}


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (env(AIM_ENGINE_ARGS='{"a": 1}'), []),
        (env(AIM_ENGINE_ARGS=""), []),
        (env(OTHER="not json"), []),
        (None, []),
        ([{"name": "AIM_ENGINE_ARGS", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}], []),
        (env(AIM_ENGINE_ARGS='{"a": '), ["AIM_ENGINE_ARGS is not valid JSON"]),
        (env(AIM_ENGINE_ARGS="--tp 2"), ["AIM_ENGINE_ARGS is not valid JSON"]),
        (env(AIM_ENGINE_ARGS="[1]"), ["AIM_ENGINE_ARGS must be a JSON object, got a JSON array"]),
        (env(AIM_ENGINE_ARGS='"s"'), ["AIM_ENGINE_ARGS must be a JSON object, got a JSON string"]),
        (env(AIM_ENGINE_ARGS="3"), ["AIM_ENGINE_ARGS must be a JSON object, got a JSON number"]),
    ],
)
def test_engine_args_problems(entries, expected):
    problems = engine_args_problems(entries)
    assert len(problems) == len(expected)
    for problem, start in zip(problems, expected):
        assert problem.startswith(start)
