import hashlib

import pytest

from aim_core.reconcile.errors import ReconcileError
from aim_core.reconcile.gojson import go_json, go_marshal
from aim_core.reconcile.health import Category
from aim_core.reconcile.naming import (
    ImageParts,
    ModelSourceKey,
    artifact_name,
    artifact_pvc_name,
    auto_custom_template_name,
    cache_volume_name,
    check_size_job_name,
    cluster_model_name_from_source,
    custom_model_name,
    custom_template_name,
    dedicated_cache_name,
    derived_name,
    derived_template_name,
    discovery_job_name,
    discovery_spec_hash,
    download_job_name,
    image_parts,
    inference_service_name,
    model_name_from_image,
    recommended_template_name,
    rfc1123,
    route_name,
    sanitize_label_value,
    sanitize_name_part,
    shared_cache_name,
)


def sha(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


# Every computed example of spec table 2.5.
SPEC_EXAMPLES = [
    (inference_service_name("test-service", "default"), "test-service-1080a608"),
    (route_name("test-service", "default"), "test-service-1080a608"),
    (shared_cache_name("my-template", "default"), "my-template-1080a608"),
    (model_name_from_image("ghcr.io/silogen/aim-dummy:0.1.10"), "aim-dummy-0-1-10-9bf80281"),
    (
        custom_model_name(
            "ghcr.io/silogen/aim-dummy:0.1.10", [ModelSourceKey("inline/test-model", "hf://sshleifer/tiny-gpt2")]
        ),
        "inline-test-model-2cfa2a00",
    ),
    (
        recommended_template_name("m", "ghcr.io/silogen/aim-dummy:0.1.10", "MI300X", 1, "latency", "fp16"),
        "ghcr-io-silogen-aim-dummy-0-1-10-1x-mi300x-lat-fp16-0823",
    ),
    (
        custom_template_name("custom-model-test", 1, "multi-gpu", gpu=(2, "MI300X")),
        "custom-model-test-custom-multi-gpu-mi300x-e999d587",
    ),
    (auto_custom_template_name("auto-gen-template-test"), "auto-gen-template-test-custom-60ba3f14"),
    (
        derived_template_name("my-template", "MI300X", 4, "fp8", "throughput"),
        "my-template-ovr-mi300x-4gpu-fp8-throughput-b295",
    ),
    (artifact_name("hf://sshleifer/tiny-gpt2"), "hf---sshleifer-tiny-gpt2-fc6a9647bb"),
    (
        cluster_model_name_from_source("docker.io", "amdenterpriseai/aim-qwen-qwen3-32b", "0.8.5"),
        "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-72f726",
    ),
    (
        discovery_job_name(
            "test-template-discovery-namespace",
            "test-model-discovery-namespace",
            "ghcr.io/silogen/aim-dummy:0.1.8",
            gpu=("MI300X", 1),
        ),
        "discover-test-template-discovery-namespace-ee237b0c",
    ),
]


@pytest.mark.parametrize(("computed", "expected"), SPEC_EXAMPLES, ids=[e for _, e in SPEC_EXAMPLES])
def test_spec_examples(computed, expected):
    assert computed == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("My_Model.V2", "my-model-v2"),
        ("a..b", "a--b"),  # runs are not collapsed
        ("--x--", "x"),
        ("", "part"),
        ("!!!", "part"),
        ("a" * 62 + "-" + "b" * 7, "a" * 62),  # cut to 63, trailing '-' trimmed
        ("Ünï-ü", "n"),  # non-ASCII letters are outside [a-z0-9-]
    ],
)
def test_sanitize_name_part(value, expected):
    assert sanitize_name_part(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("My Model/V1.0", "my_model_v1.0"),
        ("a  //  b", "a_b"),  # runs collapse to one '_'
        ("__x__", "x"),
        (".-_x_-.", "x"),
        ("A..B", "a..b"),
        ("", None),
        ("!!!", None),
        ("a" * 62 + ".b", "a" * 62),
    ],
)
def test_sanitize_label_value(value, expected):
    assert sanitize_label_value(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("My.Artifact_Name", "my-artifact-name"), ("--a..b--", "a-b"), ("x" * 70, "x" * 63)],
)
def test_rfc1123(value, expected):
    assert rfc1123(value) == expected


def test_cache_volume_name():
    assert cache_volume_name("hf---sshleifer-tiny.gpt2-fc6a9647bb") == "hf---sshleifer-tiny-gpt2-fc6a9647bb"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        ([], "null"),
        ((), "null"),
        ({}, "null"),
        (True, "true"),
        (0, "0"),
        (-12, "-12"),
        (4.0, "4"),
        (1.5, "1.5"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (1e21, "1e+21"),
        ("default", '"default"'),
        ("https://x?a=1&b=<2>", '"https://x?a=1\\u0026b=\\u003c2\\u003e"'),
        ("é ☃", '"é ☃"'),  # raw UTF-8, not \u escapes
        ("a\u2028b\u2029", '"a\\u2028b\\u2029"'),
        ('q"\\', '"q\\"\\\\"'),
        ("\n\t\r\b\f\x01\x7f", '"\\n\\t\\r\\b\\f\\u0001\x7f"'),
        (["a", 1, None], '["a",1,null]'),
        ({"b": "2", "a": "1"}, '["a","1","b","2"]'),  # maps flatten to sorted [k, v, ...]
        ([{"name": "A", "value": ""}], '[{"name":"A"}]'),
        ([{"value": "v", "name": "A"}], '[{"name":"A","value":"v"}]'),  # Go field order
        (
            [{"name": "T", "valueFrom": {"secretKeyRef": {"key": "k", "name": "s", "optional": False}}}],
            '[{"name":"T","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]',
        ),
    ],
)
def test_go_json(value, expected):
    assert go_json(value) == expected


def test_go_marshal_objects_and_empty_lists():
    assert go_marshal({"b": {"y": 1, "x": [1.0, "&"]}, "a": []}) == '{"a":[],"b":{"x":[1,"\\u0026"],"y":1}}'
    with pytest.raises(ValueError):
        go_marshal(float("nan"))
    with pytest.raises(TypeError):
        go_marshal(object())


@pytest.mark.parametrize(
    ("parts", "inputs", "n", "limit", "expected"),
    [
        (["Test-Service"], ["default"], 8, 63, "test-service-1080a608"),
        (["a", "b"], [], 8, 63, "a-b"),  # no hash inputs: no suffix
        (["abc-def"], [], 8, 4, "abc"),  # trailing '-' trimmed while cutting
        (["a", "b", "c"], [], 8, 3, "a-b-c"),  # gives up at one-char parts
        (["a" * 40, "b" * 30], ["x"], 8, 63, "a" * 26 + "-" + "b" * 27 + "-" + sha('"x"', 8)),
    ],
)
def test_derived_name(parts, inputs, n, limit, expected):
    name = derived_name(parts, inputs, n, limit)
    assert name == expected
    assert len(name) <= limit or limit < 6


def test_inference_service_name_is_shortened_for_the_predictor_host():
    service = "s" * 50
    isvc = inference_service_name(service, "default")
    assert isvc == "s" * 36 + "-1080a608"
    assert len(f"{isvc}-predictor-default") == 63
    assert route_name(service, "default") == service + "-1080a608"  # route keeps the plain limit


def test_inference_service_name_namespace_limits():
    assert inference_service_name("svc", "n" * 42) == "s-" + sha('"' + "n" * 42 + '"', 8)
    with pytest.raises(ReconcileError) as raised:
        inference_service_name("svc", "n" * 43)
    assert raised.value.category is Category.INVALID_SPEC
    assert raised.value.reason == "NamespaceTooLong"
    assert "42" in raised.value.message


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("ghcr.io/silogen/aim-dummy:0.1.10", ("ghcr.io", "aim-dummy", "0-1-10")),
        ("ubuntu", ("docker.io", "ubuntu", "latest")),
        ("amdenterpriseai/aim-qwen:0.8.5", ("docker.io", "aim-qwen", "0-8-5")),
        ("localhost/foo:1", ("localhost", "foo", "1")),
        ("localhost:5000/org/Repo_Name:V1.0", ("localhost:5000", "repo-name", "v1-0")),
        ("reg.io/org/img@sha256:abcdef0123456789", ("reg.io", "img", "abcdef")),
        ("reg.io/org/img:1.0@sha256:ABCDEF012345", ("reg.io", "img", "abcdef")),  # digest wins
        ("img__x:1..2", ("docker.io", "img-x", "1-2")),  # dash runs collapse
        ("  img:1  ", ("docker.io", "img", "1")),
    ],
)
def test_image_parts(image, expected):
    assert image_parts(image) == ImageParts(*expected)


@pytest.mark.parametrize(
    "image", ["", "   ", "img:", "img@sha256:xyz123", "img@sha256:", "img@abcdef", "img@sha256:abc", ":1.0", "__:1"]
)
def test_image_parts_rejects(image):
    with pytest.raises(ReconcileError) as raised:
        image_parts(image)
    assert (raised.value.category, raised.value.reason) == (Category.INVALID_SPEC, "InvalidImageReference")


def test_model_name_from_image_trims_and_hashes_the_trimmed_image():
    assert model_name_from_image("  ghcr.io/silogen/aim-dummy:0.1.10 ") == "aim-dummy-0-1-10-9bf80281"
    assert model_name_from_image("img@sha256:abcdef99") == "img-abcdef-" + sha('"img@sha256:abcdef99"', 8)


def test_custom_model_name_hashes_endpoint_only_when_set():
    source = ModelSourceKey("org/m", "s3://bucket/m", "http://minio:9000")
    payload = '"base:1"|"org/m"|"s3://bucket/m"|"http://minio:9000"'
    assert custom_model_name("base:1", [source]) == "org-m-" + sha(payload, 8)
    spec = {
        "modelId": "org/m",
        "sourceUri": "s3://bucket/m",
        "env": [{"name": "AWS_ENDPOINT_URL", "value": "http://minio:9000"}],
    }
    assert ModelSourceKey.from_spec(spec) == source
    assert ModelSourceKey.from_spec({"modelId": "a", "sourceUri": "b"}) == ModelSourceKey("a", "b", "")
    with pytest.raises(ReconcileError):
        custom_model_name("base:1", [])


def test_recommended_template_name_without_gpu():
    # Our reading of the rule for unset fields: they drop out of suffix and hash string.
    name = recommended_template_name("m", "img:1", metric="throughput", precision="fp8")
    assert name == "img-1-thr-fp8-" + sha('"m-img:1-throughput-fp8"', 4)
    assert recommended_template_name("m", "img:1") == "img-1-" + sha('"m-img:1"', 4)


def test_custom_template_name_with_profile():
    name = custom_template_name("cm", 0, "", profile=("fp8", "latency"))
    assert name == "cm-custom-fp8-" + sha('"cm"|0|""|"fp8"|"latency"', 8)


def test_derived_template_name_hashes_only_set_fields():
    assert derived_template_name("base", precision="fp16") == "base-ovr-fp16-" + sha('"precision"|"fp16"', 4)
    assert derived_template_name("base", gpu_count=2) == "base-ovr-2gpu-" + sha('"count"|2', 4)
    assert derived_template_name("base") == "base-ovr"  # nothing set: no hash inputs, no suffix


def test_dedicated_cache_and_artifact_children():
    assert dedicated_cache_name("my-template", "svc", "uid-1") == "my-template-svc-" + sha('"uid-1"', 8)
    assert artifact_pvc_name("art", "u") == "art-cache-" + sha('"u"', 8)
    assert download_job_name("art", "u") == "art-download-" + sha('"u"', 8)
    assert check_size_job_name("art", "u") == "art-check-size-" + sha('"u"', 8)


def test_artifact_name_hashes_env_class_and_dedicated_cache():
    env = [{"name": "HF_ENDPOINT", "value": "https://x?a=1&b=2"}]
    payload = '"hf://a/b.c"|[{"name":"HF_ENDPOINT","value":"https://x?a=1\\u0026b=2"}]|"fast"'
    assert artifact_name("hf://a/b.c", env, "fast") == "hf---a-b-c-" + sha(payload, 10)
    dedicated = '"hf://a/b.c"|null|""|"dedicated"|"cache-a"'
    assert artifact_name("hf://a/b.c", [], dedicated_to="cache-a") == "hf---a-b-c-" + sha(dedicated, 10)
    assert artifact_name("hf://a/b.c", None) == artifact_name("hf://a/b.c", [])


def test_discovery_job_name_concatenates_without_separators():
    env = [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
    name = discovery_job_name(
        "T" * 60,
        "model",
        "img:1",
        service_account="sa",
        env=env,
        pull_secrets=["p1", "p2"],
        metric="latency",
        precision="fp8",
        profile_id="prof",
    )
    assert name == "discover-" + "T" * 45 + "-" + sha("modelimg:1saA1Bp1p2latencyfp8prof", 8)
    assert len(name) == 63  # the job-name label on its pods allows no more


def test_discovery_job_name_of_a_dotted_template_is_a_valid_label_value():
    name = discovery_job_name("team.v1.", "m", "img:1")
    assert name.startswith("discover-team-v1-") and ".-" not in name and "--" not in name


def test_discovery_spec_hash():
    assert discovery_spec_hash("m", "img:1", "latency", "fp8", "MI300X", 2, "p") == sha("mimg:1latencyfp8MI300X2p", 16)
