"""Hook implementations of the kserve plugin."""

from aim_core import hookimpl
from aim_plugin_kserve.doctor import KServeChecks
from aim_plugin_kserve.inferenceservice import InferenceServiceBuilder


@hookimpl
def aim_runtime_builders():
    return [InferenceServiceBuilder()]


@hookimpl
def aim_doctor_checks():
    return [KServeChecks()]
