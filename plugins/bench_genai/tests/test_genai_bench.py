"""genai-bench really runs against the local OpenAI-compatible fake, offline.

The command the plugin builds is run as the Job's container would run it (the test plays
the kubelet: the report directory and the summary file are temporary paths), and the
summary it leaves is parsed into results that must match the fake's known timing.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import attrs
import pytest
from aim_plugin_bench_genai.tool import SUMMARY_FORMAT, GenaiBench

from aim_core import BENCH_REPORT_DIR_ENV, BENCH_SUMMARY_ENV, BenchmarkReportError, BenchmarkRequest
from aim_core.plugin.manager import get_plugin_manager, providers
from aim_testing.openai_server import OpenAIServer
from aim_testing.tokenizer import write_tokenizer

pytestmark = pytest.mark.skipif(
    shutil.which("genai-bench") is None and not (Path(os.sys.executable).parent / "genai-bench").exists(),
    reason="genai-bench is not installed (scripts/setup installs it)",
)

TTFT_MS, ITL_MS = 50.0, 10.0


def run(request: BenchmarkRequest, tmp_path: Path, extra_env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the container command locally; returns (exit code, summary file text, output)."""
    cmd = GenaiBench().command(request)
    summary = tmp_path / "termination-log"
    env = dict(os.environ)
    env["PATH"] = f"{Path(os.sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(cmd.env)
    env |= {BENCH_REPORT_DIR_ENV: str(tmp_path / "report"), BENCH_SUMMARY_ENV: str(summary), "HF_HUB_OFFLINE": "1"}
    env |= extra_env or {}
    done = subprocess.run([*cmd.command, *cmd.args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=400)
    return done.returncode, summary.read_text() if summary.exists() else "", done.stdout + done.stderr


def request(url: str, tokenizer: Path, **kw) -> BenchmarkRequest:
    base = dict(
        name="run-1",
        endpoint=url,
        model="fake-model",
        tokenizer=str(tokenizer),
        scenarios=("D(32,20)",),
        concurrency=(1, 4),
        max_requests=16,
    )
    return BenchmarkRequest(**(base | kw))


def test_the_plugin_is_found_by_its_entry_point():
    assert isinstance(providers(get_plugin_manager(), "aim_benchmark_tools")["genai-bench"], GenaiBench)


def test_measures_the_fakes_timing(tmp_path):
    with OpenAIServer(ttft=TTFT_MS / 1000, itl=ITL_MS / 1000) as fake:
        req = request(fake.url, write_tokenizer(tmp_path / "tok"))
        code, summary, output = run(req, tmp_path)
    assert code == 0, output[-3000:]
    results = {(r.scenario, r.concurrency): r for r in GenaiBench().parse(summary, req)}
    assert set(results) == {("D(32,20)", 1), ("D(32,20)", 4)}
    for (_, level), r in results.items():
        assert r.completed_requests >= 16 and r.failed_requests == 0
        # TTFT: the fake's 50 ms plus client and scheduling overhead (2 shared cores)
        assert TTFT_MS <= r.ttft_ms.p50 <= TTFT_MS + 60, r
        assert r.ttft_ms.p50 <= r.ttft_ms.p90 <= r.ttft_ms.p99
        assert ITL_MS * 0.8 <= r.inter_token_latency_ms.p50 <= ITL_MS * 1.5, r
        e2e = TTFT_MS + 19 * ITL_MS  # 20 output tokens
        assert e2e <= r.e2e_latency_ms.p50 <= e2e + 100, r
        # throughput: at most `level` requests of 20 tokens per e2e latency, and not far below it
        ideal = level * 20 / (e2e / 1000)
        assert ideal * 0.4 <= r.output_tokens_per_second <= ideal * 1.05, (r, ideal)
    assert results[("D(32,20)", 4)].output_tokens_per_second > 2 * results[("D(32,20)", 1)].output_tokens_per_second
    assert (tmp_path / "report" / "run-1").is_dir()
    assert len(list((tmp_path / "report" / "run-1").glob("D32_20_*.json"))) == 2
    assert all(r["body"]["model"] == "fake-model" and r["body"]["stream"] for r in fake.requests)


def test_a_failing_target_fails_the_container_with_the_reason_in_its_output(tmp_path):
    with OpenAIServer(fail=True) as fake:
        req = request(fake.url, write_tokenizer(tmp_path / "tok"), concurrency=(1,), max_requests=4)
        code, summary, output = run(req, tmp_path)
    assert fake.requests, "genai-bench never reached the fake"
    assert code != 0 and summary == ""
    # genai-bench itself gives up: no TTFT could be measured (its last log lines, the JobFailed message)
    assert "No values found for metric 'ttft'" in " ".join(output.split())


def test_rates_are_refused_with_the_field_to_change():
    req = BenchmarkRequest(
        name="r", endpoint="http://x", model="m", tokenizer="t", scenarios=("D(1,1)",), request_rates=(2.0,)
    )
    assert "spec.concurrency" in GenaiBench().unsupported(req)


def test_the_installed_genai_bench_still_has_no_request_rate_load():
    """Why rates are refused: genai-bench iterates concurrency levels (or batch sizes) only, closed loop.

    Its CLI options (read from the installed source, not imported: genai-bench patches the process
    with gevent) have no rate, QPS or arrival option; ``--spawn-rate`` is how fast its users start.
    When a release adds one, this fails: support ``spec.requestRates`` in ``GenaiBench`` then.
    """
    spec = importlib.util.find_spec("genai_bench")
    assert spec is not None and spec.origin
    source = (Path(spec.origin).parent / "cli" / "option_groups.py").read_text()
    options = set(re.findall(r'"(--[a-z][-a-z]*)"', source))
    assert {"--num-concurrency", "--iteration-type", "--spawn-rate"} <= options
    rate_like = {o for o in options if re.search(r"rate|qps|arrival|poisson", o)}
    assert rate_like == {"--spawn-rate"}, f"genai-bench now has {rate_like}: support spec.requestRates"
    iteration = re.search(r'"--iteration-type",\s*type=click\.Choice\(\[([^]]*)\]', source)
    assert iteration is not None
    assert re.findall(r'"([a-z_]+)"', iteration.group(1)) == ["num_concurrency", "batch_size"]


@pytest.mark.parametrize(
    "summary",
    [
        "",
        "Traceback (most recent call last):\n  boom",
        '{"format": "other"}',
        f'{{"format": "{SUMMARY_FORMAT}", "runs": [[1, 2]]}}',
        f'{{"format": "{SUMMARY_FORMAT}", "runs": []}}',
    ],
)
def test_an_unreadable_summary_is_a_report_error(summary):
    req = BenchmarkRequest(
        name="r", endpoint="http://x", model="m", tokenizer="t", scenarios=("D(1,1)",), concurrency=(1,)
    )
    with pytest.raises(BenchmarkReportError):
        GenaiBench().parse(summary, req)


def test_the_command_quotes_what_it_is_given():
    req = BenchmarkRequest(
        name="r",
        endpoint="http://x",
        model="a b; rm -rf /",
        tokenizer="t",
        scenarios=("N(10,2)/(5,1)",),
        concurrency=(1, 8),
        max_duration_s=90,
        has_api_key=True,
    )
    script = GenaiBench().command(req).command[-1]
    assert "'a b; rm -rf /'" in script and "--max-time-per-run 2" in script
    assert "'N(10,2)/(5,1)'" in script and '--api-key "$AIM_BENCH_API_KEY"' in script


def test_the_summary_of_the_largest_run_fits_in_a_termination_message(tmp_path):
    """10 scenarios x 4 levels (the CRD's limit of 40 runs) with long numbers: under kubelet's 4096 bytes."""
    import json

    from aim_plugin_bench_genai.tool import SUMMARIZE

    folder = tmp_path / "run"
    folder.mkdir()
    stats = {q: 123456.789 for q in ("p50", "p90", "p99")}
    scenarios = [f"N({480 + i},240)/(300,150)" for i in range(10)]
    for i, scenario in enumerate(scenarios):
        for level in (1, 8, 64, 256):
            agg = {
                "scenario": scenario,
                "num_concurrency": level,
                "num_completed_requests": 100000,
                "num_error_requests": 100000,
                "requests_per_second": 12345.678901,
                "mean_output_throughput_tokens_per_s": 123456.789012,
                "stats": {"ttft": stats, "tpot": stats, "e2e_latency": stats},
            }
            (folder / f"{i}_{level}.json").write_text(json.dumps({"aggregated_metrics": agg, "_time_unit": "ms"}))
    summary = tmp_path / "termination-log"
    env = dict(os.environ) | {BENCH_SUMMARY_ENV: str(summary)}
    subprocess.run([os.sys.executable, "-c", SUMMARIZE, str(folder)], env=env, check=True, capture_output=True)
    text = summary.read_text()
    assert len(text.encode()) <= 4096, len(text.encode())
    req = BenchmarkRequest(
        name="r", endpoint="http://x", model="m", tokenizer="t", scenarios=tuple(scenarios), concurrency=(1, 8, 64, 256)
    )
    results = GenaiBench().parse(text, req)
    assert len(results) == 40 and {r.scenario for r in results} == set(scenarios)
    r = results[0]
    assert (r.ttft_ms.p50, r.ttft_ms.p90, r.inter_token_latency_ms.p90, r.e2e_latency_ms.p99) == (
        123457.0,
        123457.0,
        None,
        123457.0,
    )  # whole ms: 0.1 ms did not fit in 4096 bytes


def test_the_report_is_uploaded_to_an_s3_uri(tmp_path):
    """spec.report.uri s3://BUCKET/PREFIX: genai-bench uploads the run's folder to PREFIX/<run>/ (moto's S3 server)."""
    boto3 = pytest.importorskip("boto3")
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        creds = {"AWS_ACCESS_KEY_ID": "AKIATESTING", "AWS_SECRET_ACCESS_KEY": "testing-secret"}
        aws = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_DEFAULT_REGION": "us-east-1"} | creds
        s3 = boto3.client("s3", endpoint_url=aws["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id=creds["AWS_ACCESS_KEY_ID"], aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"])  # fmt: skip
        s3.create_bucket(Bucket="results")
        with OpenAIServer() as fake:
            req = request(fake.url, write_tokenizer(tmp_path / "tok"), concurrency=(1,), max_requests=4)
            req = attrs.evolve(req, report_uri="s3://results/team/llama")
            code, summary, output = run(req, tmp_path, extra_env=aws | {"AWS_EC2_METADATA_DISABLED": "true"})
        assert code == 0, output[-3000:]
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket="results").get("Contents", [])]
        assert any(k.startswith("team/llama/run-1/D32_20_") and k.endswith(".json") for k in keys), keys
        assert GenaiBench().parse(summary, req)[0].completed_requests >= 4
    finally:
        server.stop()
