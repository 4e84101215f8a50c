"""The collectors behind tests/test_docs_index.py find what they must, on small sources written for it."""

from __future__ import annotations

import argparse
import textwrap

from tests.docs.collect import (
    cli_commands,
    cli_options,
    env_vars_in,
    heading_code_spans,
    metric_families_in,
    reason_sites,
    reasons_in,
    subparser,
    table_first_cells,
)

SAMPLE = textwrap.dedent("""
    from aim_core.reconcile.health import Category, Health, State
    from aim_core.service.routing import GATEWAY_NOT_CONFIGURED

    MODULE_REASON = "FromAConstant"
    PLAIN_CONSTANT = "FromAPlainConstant"
    _PULL_REASONS = {Category.AUTH: "FromAReasonTable", Category.UNKNOWN: "AlsoFromTheTable"}
    EMPTY, MALFORMED = ("FromUnpackingOne", "FromUnpackingTwo")
    READY = "Ready"  # a condition type: only a reason where it is used as one
    _PENDING = frozenset({"FromAComparedSet"})

    def plan(x, reason="FromADefault", *, failed_reason="FromAKeywordDefault"):
        Health(State.PENDING, "FromHealth", "message")
        Health.error(Category.AUTH, "FromHealthError", f"bad {x}")
        Health.ok("FromOk")
        Health.progressing("FromProgressing" if x else "FromTheOtherBranch", "waiting")
        plan.issue(Category.INVALID_SPEC, "FromIssue", "some text")
        plan.issue(Category.INVALID_SPEC, GATEWAY_NOT_CONFIGURED, "imported constant")
        Condition(READY, "True", "FromACondition", message)
        helper("FromAHelper", f"the thing {x} is wrong")
        Condition.false(READY, "FromAShorthand", _not_ready(name, detail))
        Condition.true(READY, PLAIN_CONSTANT, "message")
        other_helper("FromAJoinedMessage", "; ".join(problems))
        problems.append(("FromAProblemPair", f"{x} is not valid"))
        RegistryError("auth", "no", reason="FromKeyword")
        Failure(kind, detail, not_ready_reason="FromSuffixedKeyword")
        cond = {"type": READY, "status": "False", "reason": "FromADict", "message": "m"}
        reason = "FromAnAssignment"
        self.last_reason = "FromAnAttribute"
        DiscoveryProblem(EMPTY, "nothing was printed")
        if pod.get("reason") == "FromAComparison" or reason in _PENDING:
            pass
        request("GET", f"/v2/{x}/manifests")        # an HTTP verb and a path: not a reason
        plan.component("CachePvc", Health.ok("FromNested"))  # a component name: not a reason
        lowercase("notAReason", "because it is not CamelCase")
        header("STATUS", "upper-case words are column names, not reasons")
        return MODULE_REASON
""")


def test_reasons_are_found_in_every_shape_the_code_uses():
    found = reasons_in(SAMPLE, constants={"GATEWAY_NOT_CONFIGURED": {"GatewayNotConfigured"}})

    expected = {
        "FromAConstant",
        "FromAReasonTable",
        "AlsoFromTheTable",
        "FromUnpackingOne",
        "FromAComparedSet",
        "FromADefault",
        "FromAKeywordDefault",
        "FromHealth",
        "FromHealthError",
        "FromOk",
        "FromProgressing",
        "FromTheOtherBranch",
        "FromIssue",
        "GatewayNotConfigured",
        "FromACondition",
        "FromAHelper",
        "FromAProblemPair",
        "FromKeyword",
        "FromSuffixedKeyword",
        "FromADict",
        "FromAnAssignment",
        "FromAnAttribute",
        "FromAComparison",
        "FromNested",
        "FromAShorthand",
        "FromAPlainConstant",
        "FromAJoinedMessage",
    }
    assert expected - found == set()
    assert found - expected == set()  # no "GET", "CachePvc", "True", "Ready" (a type), "notAReason"


def test_reason_sites_give_the_line():
    sites = dict(reason_sites('x = 1\nHealth.ok("Here")\n'))

    assert sites == {"Here": 2}


def test_a_module_without_reasons_yields_none():
    assert reasons_in("def f():\n    return {'kind': 'Pod'}\n") == set()


def test_environment_reads_are_found_in_every_shape():
    source = textwrap.dedent("""
        import os
        ENV_FROM_CONSTANT = "FROM_A_CONSTANT"
        DOWNLOAD_IMAGE_ENV = "FROM_A_SUFFIXED_CONSTANT"
        PROTOCOL_ENV = {"XET": {"NOT_READ_HERE": "1"}}

        def settings(env=None):
            env = os.environ if env is None else env
            os.environ.get("FROM_OS_ENVIRON")
            os.getenv("FROM_GETENV")
            os.environ["FROM_A_SUBSCRIPT"]
            env.get("FROM_ENV_GET", "")
            env.get(ENV_FROM_CONSTANT)
            _seconds(env, "FROM_A_HELPER", 5.0)
            child = dict(os.environ)
            child["SET_NOT_READ"] = "1"
            labels.get("NOT_ENVIRONMENT")
    """)

    found = env_vars_in(source)

    assert found == {
        "FROM_A_CONSTANT",
        "FROM_A_SUFFIXED_CONSTANT",
        "FROM_OS_ENVIRON",
        "FROM_GETENV",
        "FROM_A_SUBSCRIPT",
        "FROM_ENV_GET",
        "FROM_A_HELPER",
    }


def test_metric_families_are_found():
    source = textwrap.dedent("""
        from prometheus_client import Counter, Gauge, Histogram
        from prometheus_client.core import GaugeMetricFamily
        OBJECTS = "aim_objects"
        class Metrics:
            def __init__(self):
                self.a = Counter("controller_runtime_reconcile_total", "help", ["controller"], registry=r)
                self.b = Histogram(name="workqueue_queue_duration_seconds", documentation="help")
            def collect(self):
                yield GaugeMetricFamily(OBJECTS, "help", labels=["kind"])
        Gauge("not a metric name", "help")
    """)

    assert metric_families_in(source) == {
        "controller_runtime_reconcile_total",
        "workqueue_queue_duration_seconds",
        "aim_objects",
    }


def test_cli_commands_are_walked_to_the_leaves():
    parser = argparse.ArgumentParser(prog="aim-engine")
    sub = parser.add_subparsers()
    run = sub.add_parser("run")
    run.add_argument("-n", "--namespace")
    run.add_argument("-v", action="store_true")
    run.add_argument("--workers", "--threads")
    artifact = sub.add_parser("artifact").add_subparsers()
    artifact.add_parser("download")
    artifact.add_parser("check-size")
    describe = sub.add_parser("describe").add_subparsers()
    describe.add_parser("service")

    assert cli_commands(parser) == [
        "aim-engine run",
        "aim-engine artifact download",
        "aim-engine artifact check-size",
        "aim-engine describe service",
    ]
    assert cli_options(subparser(parser, "run")) == ["--namespace", "-v", "--workers"]
    assert subparser(parser, "artifact", "download").prog.endswith("artifact download")


def test_markdown_helpers():
    text = textwrap.dedent("""
        # `aim-engine run`
        ```sh
        # `not-a-heading` inside a fence
        ```
        ## The `aim_gpu_vendors() -> x` hook and `other`

        | Reason | Meaning |
        |---|---|
        | `Listed` | yes |
        | `A`, `B` | not a single name |
        |`Tight`|no spaces|
        | plain | no backticks |
    """)

    assert heading_code_spans(text) == ["aim-engine run", "aim_gpu_vendors() -> x", "other"]
    assert table_first_cells(text) == {"Listed", "Tight"}
