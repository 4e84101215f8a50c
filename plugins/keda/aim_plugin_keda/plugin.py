"""Hook implementations of the keda plugin."""

from aim_core import hookimpl

from aim_plugin_keda.autoscaler import KedaAutoscaler


@hookimpl
def aim_autoscalers():
    return [KedaAutoscaler()]
