"""Hook implementations of the gpu_amd plugin."""

from aim_core import hookimpl
from aim_plugin_gpu_amd.vendor import AmdGpuVendor


@hookimpl
def aim_gpu_vendors():
    return [AmdGpuVendor()]
