"""Hook implementations of the gateway plugin."""

from aim_core import hookimpl

from aim_plugin_gateway.httproute import HTTPRouteBuilder


@hookimpl
def aim_route_builders():
    return [HTTPRouteBuilder()]
