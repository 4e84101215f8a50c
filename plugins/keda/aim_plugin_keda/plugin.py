"""Hook implementations of the keda plugin."""

from aim_core import hookimpl
from aim_plugin_keda.autoscaler import KedaAutoscaler
from aim_plugin_keda.doctor import KedaChecks


@hookimpl
def aim_autoscalers():
    return [KedaAutoscaler()]


@hookimpl
def aim_doctor_checks():
    return [KedaChecks()]
