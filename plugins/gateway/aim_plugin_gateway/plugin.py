"""Hook implementations of the gateway plugin."""

from aim_core import hookimpl
from aim_plugin_gateway.doctor import GatewayChecks
from aim_plugin_gateway.httproute import HTTPRouteBuilder


@hookimpl
def aim_route_builders():
    return [HTTPRouteBuilder()]


@hookimpl
def aim_doctor_checks():
    return [GatewayChecks()]
