"""CRD judgements (pure): installed, Established, serving our version, with the fields we write."""

from __future__ import annotations

from aim_core import ResourceRef
from aim_core.doctor.crds import crd_findings
from aim_testing.crdschema import load_crd, third_party_crd

ISVC = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices")


def isvc_crd(established: bool = True) -> dict:
    crd = dict(load_crd(str(third_party_crd("serving.kserve.io_inferenceservices.yaml"))))
    crd["status"] = {"conditions": [{"type": "Established", "status": "True" if established else "False"}]}
    return crd


def test_kserve_0_16_has_the_fields_we_write():
    [finding] = crd_findings(
        isvc_crd(), ISVC, fix="x", required_paths=("spec.predictor.containers", "spec.predictor.autoScaling")
    )
    assert finding.level == "ok"


def test_an_older_kserve_without_a_field_fails_naming_it():
    [finding] = crd_findings(isvc_crd(), ISVC, fix="upgrade", required_paths=("spec.predictor.notThere",))
    assert (finding.level, finding.fix) == ("fail", "upgrade")
    assert "has no field spec.predictor.notThere: the installed version is too old" in finding.message


def test_missing_is_a_warning_when_asked():
    [finding] = crd_findings(None, ISVC, fix="install", missing_level="warn")
    assert finding.level == "warn" and finding.message.startswith(
        "CRD inferenceservices.serving.kserve.io is not installed"
    )


def test_our_crds_compare_by_what_we_generate_so_server_defaults_do_not_count():
    import copy

    from aim_core.api.crds import generate_crds
    from aim_core.doctor.crds import project_crd_findings

    wanted = generate_crds()

    def stored(crd, change=None):
        crd = copy.deepcopy(crd)
        crd["spec"]["conversion"] = {"strategy": "None"}  # what a real API server adds
        for version in crd["spec"]["versions"]:
            for column in version.get("additionalPrinterColumns") or ():
                column.setdefault("priority", 0)
        if change:
            change(crd)
        crd["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
        return crd

    live = {c["metadata"]["name"]: stored(c) for c in wanted}
    assert [f.level for f in project_crd_findings(live, wanted)] == ["ok"]

    def drop_replicas(crd):
        del crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"]

    live["aimservices.aim.eai.amd.com"] = stored(
        next(c for c in wanted if c["metadata"]["name"].startswith("aimservices.")), drop_replicas
    )
    [finding] = project_crd_findings(live, wanted)
    assert finding.level == "fail" and finding.message.endswith(": aimservices.aim.eai.amd.com")
