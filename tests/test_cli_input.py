"""Bad input through the CLI as a user runs it: a process, its stdout, stderr and exit status.

Every mistake ends in one line on stderr starting ``aim-engine:`` that names the file (and the
line where there is one), exit 2 for input the command cannot read; never a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cliprocess import ROOT
from tests.cliprocess import cli as run_cli

EXAMPLES = ROOT / "examples"

SERVICE = """\
apiVersion: aim.eai.amd.com/v1alpha1
kind: AIMService
metadata:
  name: {name}
  namespace: ml-team
spec:
  model:
    name: qwen3-32b
"""


def cli(*args: str, stdin: str | None = None, cwd: Path | None = None, env: dict | None = None):
    """``aim-engine ARGS`` in a process with no cluster configured; (exit status, stdout, stderr)."""
    base = {
        k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "AIM_ENGINE_DEBUG")
    }
    base["HOME"] = str(cwd or ROOT)  # no ~/.kube/config
    proc = run_cli(*args, stdin=stdin, cwd=cwd or ROOT, env={**base, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr


def one_line(err: str) -> str:
    """The whole of stderr, which must be one ``aim-engine:`` line and no traceback."""
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("aim-engine: "), err
    return lines[0]


# --------------------------------------------------------------------------- reading files


def test_a_missing_file_is_one_line_naming_it_and_exit_2(tmp_path):
    code, out, err = cli("render", "-f", "no-such.yaml", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert one_line(err) == "aim-engine: no-such.yaml: no such file or directory"


def test_malformed_yaml_names_the_file_line_and_column(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "svc.yaml").write_text(SERVICE.format(name="a").replace("namespace:", "  namespace:"))
    code, out, err = cli("render", "-f", "dir", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert (
        one_line(err) == "aim-engine: dir/svc.yaml:5:14: malformed YAML: mapping values are not allowed in this context"
    )


def test_a_document_without_a_name_names_the_file_line_and_document(tmp_path):
    (tmp_path / "svc.yaml").write_text(SERVICE.format(name="a") + "---\n" + SERVICE.replace("  name: {name}\n", ""))
    code, _, err = cli("render", "-f", "svc.yaml", cwd=tmp_path)
    assert code == 2
    assert one_line(err) == "aim-engine: svc.yaml:10: document 2: AIMService has no metadata.name"


def test_a_document_that_is_not_a_mapping_is_refused(tmp_path):
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    code, _, err = cli("render", "-f", "list.yaml", cwd=tmp_path)
    assert code == 2 and "list.yaml:1: document 1: expected a Kubernetes object" in one_line(err)


def test_stdin_is_read_with_dash_and_named_in_errors():
    code, out, err = cli("render", "-f", "-", "-o", "summary", stdin=SERVICE.format(name="from-stdin"))
    assert code == 0, err
    assert out.splitlines()[1].startswith("ml-team/from-stdin ")

    code, _, err = cli("render", "-f", "-", stdin="kind: AIMService\nmetadata: {name: x}\n")
    assert code == 2 and one_line(err) == "aim-engine: <stdin>:1: document 1: AIMService has no apiVersion"


def test_a_directory_of_yaml_and_json_is_read_recursively(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "svc.yaml").write_text(SERVICE.format(name="yaml-one"))
    doc = {"apiVersion": "aim.eai.amd.com/v1alpha1", "kind": "AIMService"}
    doc |= {"metadata": {"name": "json-one", "namespace": "ml-team"}, "spec": {"model": {"name": "qwen3-32b"}}}
    (tmp_path / "a" / "b" / "svc.json").write_text(json.dumps(doc))
    (tmp_path / "a" / "notes.txt").write_text("not read")
    code, out, err = cli("render", "-f", "a", "-o", "summary", cwd=tmp_path)
    assert code == 0, err
    assert sorted(line.split()[0] for line in out.splitlines()[1:]) == ["ml-team/json-one", "ml-team/yaml-one"]


# --------------------------------------------------------------------------- the cluster's credentials


def test_run_without_a_kubeconfig_says_so_in_one_line_before_starting(tmp_path):
    code, out, err = cli("run", cwd=tmp_path)
    assert (code, out) == (1, "")
    line = one_line(err)
    assert "no cluster credentials" in line and "--kubeconfig" in line
    # doctor says the same
    code, _, doctor_err = cli("doctor", cwd=tmp_path)
    assert code == 1 and one_line(doctor_err) == line


def test_a_broken_kubeconfig_is_one_line_for_run_and_doctor(tmp_path):
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nclusters: [\n")
    for command in ("run", "doctor"):
        code, _, err = cli(command, "--kubeconfig", "kubeconfig", cwd=tmp_path)
        assert code == 2
        assert one_line(err).startswith("aim-engine: kubeconfig:3:1: malformed YAML")
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    code, _, err = cli("doctor", cwd=tmp_path, env={"KUBECONFIG": str(tmp_path / "kubeconfig")})
    assert code == 1 and "cannot use the kubeconfig" in one_line(err)
    (tmp_path / "kubeconfig").write_text("clusters: 5\ncontexts: x\ncurrent-context: a\n")  # YAML, not a kubeconfig
    for command in ("doctor", "describe service chat", "bench show run-1", "templates clone --from-gpu A --to-gpu B"):
        code, _, err = cli(*command.split(), "--kubeconfig", "kubeconfig", cwd=tmp_path)
        assert code == 1 and one_line(err).startswith("aim-engine: cannot use the kubeconfig kubeconfig: "), command
    code, _, err = cli("run", "--kubeconfig", "missing", "--context", "dev", cwd=tmp_path)
    assert code == 2 and one_line(err) == "aim-engine: missing: no such file or directory"


# --------------------------------------------------------------------------- render's preflight


def refused_lines(err: str) -> list[str]:
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if ": refused: " in line]


@pytest.mark.parametrize(
    ("spec", "where", "expected"),
    [
        (
            "  caching:\n    mode: Sometimes\n",
            "19:11",
            'spec.caching.mode: Unsupported value: "Sometimes": supported values: "Dedicated", "Shared"',
        ),
        (
            "  adapters:\n  - name: sql\n    sourceUri: not-a-uri\n",
            "20:16",
            'spec.adapters.sourceUri: Invalid value: "not-a-uri": spec.adapters.sourceUri in body should match',
        ),
        ("  env: FOO\n", "18:8", 'spec.env: Invalid value: "string": spec.env in body must be of type array: "string"'),
        (
            "  env:\n  - {name: A, value: '1'}\n  - {name: A, value: '2'}\n",
            "19:3",
            'spec.env: Duplicate value: {"name": "A"}',
        ),
    ],
    ids=["enum", "pattern", "scalar-for-list", "list-map-key"],
)
def test_render_refuses_what_the_api_server_would_and_plans_nothing_from_it(tmp_path, spec, where, expected):
    (tmp_path / "svc.yaml").write_text(SERVICE.format(name="good") + "---\n" + SERVICE.format(name="bad") + spec)
    code, out, err = cli("render", "-f", "svc.yaml", "-o", "summary", cwd=tmp_path)
    assert code == 0
    [line] = refused_lines(err)
    # the file, then the line and column of the field (the second document starts on line 10)
    assert line.startswith(f'aim-engine: svc.yaml:{where}: refused: AIMService.aim.eai.amd.com "bad" is invalid: ')
    assert expected in line
    assert [row.split()[0] for row in out.splitlines()[1:]] == ["ml-team/good"]  # nothing planned from "bad"


def test_metadata_of_the_wrong_type_is_unreadable_input(tmp_path):
    cases = {
        "  namespace: ml-team\n": ("  namespace: 5\n", "metadata.namespace must be a string, not 5"),
        "  name: {name}\n": ("  name: a\n  labels: [x]\n", "metadata.labels must be a mapping of strings, not list"),
    }
    for old, (new, message) in cases.items():
        (tmp_path / "svc.yaml").write_text(SERVICE.replace(old, new).format(name="a"))
        code, _, err = cli("render", "-f", "svc.yaml", cwd=tmp_path)
        assert code == 2 and one_line(err) == f"aim-engine: svc.yaml:1: document 1: AIMService a: {message}"
    (tmp_path / "svc.yaml").write_text(
        SERVICE.format(name="a").replace("  name: a\n", "  name: a\n  annotations: {x: 1}\n")
    )
    code, _, err = cli("render", "-f", "svc.yaml", cwd=tmp_path)
    assert code == 2 and one_line(err).endswith('metadata.annotations.x: must be a string (quote it: x: "1")')


def test_negative_concurrency_and_a_bad_name_are_refused(tmp_path):
    bench = (
        "apiVersion: aim.eai.amd.com/v1alpha1\nkind: AIMBenchmark\nmetadata:\n  name: load\n  namespace: ml-team\n"
        "spec:\n  target:\n    serviceName: chat\n  scenarios: [{name: chat, inputTokens: 128, outputTokens: 128}]\n"
        "  concurrency: [-4]\n  maxRequests: 10\n"
    )
    (tmp_path / "in.yaml").write_text(bench + "---\n" + SERVICE.format(name="Bad_Name!"))
    code, out, err = cli("render", "-f", "in.yaml", "-o", "json", cwd=tmp_path)
    assert code == 0
    lines = refused_lines(err)
    assert any(
        "spec.concurrency: Invalid value: -4: spec.concurrency in body should be greater than or equal to 1" in x
        for x in lines
    ), lines
    assert any('metadata.name: Invalid value: "Bad_Name!": a lowercase RFC 1123 subdomain' in x for x in lines), lines
    report = json.loads(out)
    assert report["objects"] == [] and len(report["refused"]) == 2


def test_a_misspelt_kind_is_warned_about_with_a_suggestion(tmp_path):
    (tmp_path / "svc.yaml").write_text(SERVICE.format(name="a").replace("kind: AIMService", "kind: AIMServise"))
    code, out, err = cli("render", "-f", "svc.yaml", "-o", "summary", cwd=tmp_path)
    assert code == 0 and out == "no AIMService in the input\n"
    assert "AIMServise is not a kind of aim.eai.amd.com; did you mean AIMService? (skipped)" in one_line(err)
    (tmp_path / "svc.yaml").write_text(SERVICE.format(name="a").replace("v1alpha1", "v1"))
    code, out, err = cli("render", "-f", "svc.yaml", "-o", "summary", cwd=tmp_path)
    assert "apiVersion aim.eai.amd.com/v1 is not served; did you mean aim.eai.amd.com/v1alpha1?" in one_line(err)


def test_skipped_documents_and_duplicates_are_warned_about(tmp_path):
    # a kind no controller reads or watches (ConfigMaps are: the endpoint pickers' of inference pools)
    policy = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: settings\n"
    (tmp_path / "in.yaml").write_text(SERVICE.format(name="a") + "---\n" + policy)
    (tmp_path / "again.yaml").write_text(SERVICE.format(name="a"))
    code, _, err = cli("render", "-f", "in.yaml", "-f", "again.yaml", "-o", "summary", cwd=tmp_path)
    assert code == 0 and "Traceback" not in err
    assert "again.yaml:1: AIMService ml-team/a is also at in.yaml:1; this later one is used" in err
    assert "in.yaml:10: skipped NetworkPolicy settings (networking.k8s.io/v1)" in err


def test_kind_takes_any_case_plurals_and_short_names_and_names_the_choices():
    for kind in ("aimservice", "AIMServices", "aimsvc"):
        code, out, err = cli("render", "-f", "examples", "--kind", kind, "-o", "json")
        assert code == 0, err
        assert {o["kind"] for o in json.loads(out)["objects"]} == {"AIMService"}
    code, out, err = cli("render", "-f", "examples", "--kind", "AIMServise")
    assert (code, out) == (2, "")
    assert one_line(err) == "aim-engine: --kind AIMServise: not a kind render reports; did you mean AIMService?"


def test_strict_fails_on_a_refused_object_or_a_failed_service(tmp_path):
    assert cli("render", "-f", "examples", "--strict", "-o", "summary")[0] == 0
    (tmp_path / "unknown.yaml").write_text(SERVICE.format(name="lost").replace("qwen3-32b", "no-such-model"))
    code, out, err = cli("render", "-f", str(EXAMPLES), "-f", "unknown.yaml", "--strict", "-o", "summary", cwd=tmp_path)
    assert code == 1
    assert err.splitlines()[-1] == (
        "aim-engine: --strict: 0 object(s) would be refused, 1 service(s) would be Failed or Degraded"
    )
    # the WHY column has the cause, not the step the service waits at
    lost = next(line for line in out.splitlines() if line.startswith("ml-team/lost "))
    assert "ReferenceNotFound: model 'no-such-model' not found" in lost and "Failed" in lost
    (tmp_path / "bad.yaml").write_text(SERVICE.format(name="bad") + "  caching:\n    mode: Sometimes\n")
    code, _, err = cli("render", "-f", str(EXAMPLES), "-f", "bad.yaml", "--strict", cwd=tmp_path)
    assert code == 1 and "1 object(s) would be refused" in err


def test_explain_says_how_the_model_was_resolved():
    code, out, _ = cli("render", "-f", "examples", "--explain", "--kind", "aimsvc")
    assert code == 0
    assert "#   model: spec.model.image amdenterpriseai/aim-qwen-qwen3-32b:0.8.5 -> AIMClusterModel qwen3-32b" in out
    assert "#   model: spec.model.name qwen3-32b -> AIMClusterModel qwen3-32b (ModelResolved: " in out


# --------------------------------------------------------------------------- the last resort


def test_an_unexpected_error_is_one_line_unless_debugging(monkeypatch, capsys):
    from aim_core.cli import info, main

    def boom(args):
        raise RuntimeError("something broke\nsecond line")

    monkeypatch.setattr(info, "crds", boom)
    monkeypatch.delenv("AIM_ENGINE_DEBUG", raising=False)
    from aim_core.cli import build_parser

    parser = build_parser()
    monkeypatch.setattr("aim_core.cli.build_parser", lambda: _with_func(parser, "crds", boom))
    assert main(["crds"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "aim-engine: unexpected RuntimeError: something broke (run with -v or AIM_ENGINE_DEBUG=1 for the traceback)\n"
    )
    assert main(["-v", "crds"]) == 1
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("AIM_ENGINE_DEBUG", "1")
    assert main(["crds"]) == 1
    assert "Traceback" in capsys.readouterr().err


def _with_func(parser, command, func):
    sub = next(a for a in parser._actions if a.dest == "command")
    sub.choices[command].set_defaults(func=func)
    return parser


def test_an_object_the_planners_choke_on_is_named_and_the_others_are_still_planned(monkeypatch, capsys):
    from aim_core.cli import main, offline

    real = offline.build_status

    def choke(controller, obj, *args, **kwargs):
        if obj["kind"] == "AIMClusterModel":
            raise KeyError("imageMetadata")
        return real(controller, obj, *args, **kwargs)

    monkeypatch.setattr(offline, "build_status", choke)
    assert main(["render", "-f", str(EXAMPLES), "-o", "summary"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 + 5  # every service still planned
    assert err.startswith(f"aim-engine: {EXAMPLES}/models.yaml:")
    assert "could not plan AIMClusterModel qwen3-32b: KeyError: 'imageMetadata' (a defect of aim-engine" in err
    assert main(["render", "-f", str(EXAMPLES), "-o", "summary", "--strict"]) == 1
    assert capsys.readouterr().err.endswith("1 could not be planned\n")


def test_a_field_the_schema_does_not_know_is_warned_about_at_its_line(tmp_path):
    (tmp_path / "svc.yaml").write_text(SERVICE.format(name="a") + "  replica: 2\n")
    code, out, err = cli("render", "-f", "svc.yaml", "-o", "summary", cwd=tmp_path)
    assert code == 0 and out.splitlines()[1].startswith("ml-team/a ")
    assert one_line(err) == (
        'aim-engine: warning: svc.yaml:9:12: AIMService a: unknown field "spec.replica" (the API server drops it)'
    )
