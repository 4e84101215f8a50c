"""CRD judgements (pure): installed, Established, serving our version, with the fields we write."""

from __future__ import annotations

from aim_core import ResourceRef
from aim_core.doctor.crds import crd_findings
from aim_core.testing.crdschema import load_crd, third_party_crd

ISVC = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices")


def isvc_crd(established: bool = True) -> dict:
    crd = dict(load_crd(str(third_party_crd("serving.kserve.io_inferenceservices.yaml"))))
    crd["status"] = {"conditions": [{"type": "Established", "status": "True" if established else "False"}]}
    return crd


def test_kserve_0_16_has_the_fields_we_write():
    [finding] = crd_findings(isvc_crd(), ISVC, fix="x", required_paths=("spec.predictor.containers",
                                                                      "spec.predictor.autoScaling"))
    assert finding.level == "ok"


def test_an_older_kserve_without_a_field_fails_naming_it():
    [finding] = crd_findings(isvc_crd(), ISVC, fix="upgrade", required_paths=("spec.predictor.notThere",))
    assert (finding.level, finding.fix) == ("fail", "upgrade")
    assert "has no field spec.predictor.notThere: the installed version is too old" in finding.message


def test_missing_is_a_warning_when_asked():
    [finding] = crd_findings(None, ISVC, fix="install", missing_level="warn")
    assert finding.level == "warn" and finding.message.startswith("CRD inferenceservices.serving.kserve.io is not installed")
