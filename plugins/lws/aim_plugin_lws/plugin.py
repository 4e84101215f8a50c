"""Hook implementations of the lws plugin."""

from aim_core import hookimpl
from aim_plugin_lws.doctor import LwsChecks
from aim_plugin_lws.leaderworkerset import LeaderWorkerSetBuilder


@hookimpl
def aim_runtime_builders():
    return [LeaderWorkerSetBuilder()]


@hookimpl
def aim_doctor_checks():
    return [LwsChecks()]
