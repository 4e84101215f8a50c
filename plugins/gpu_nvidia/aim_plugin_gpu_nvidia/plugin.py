"""Hook implementations of the gpu_nvidia plugin."""

from aim_core import hookimpl
from aim_plugin_gpu_nvidia.vendor import NvidiaGpuVendor


@hookimpl
def aim_gpu_vendors():
    return [NvidiaGpuVendor()]
