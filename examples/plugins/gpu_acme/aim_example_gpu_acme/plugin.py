"""Hook implementations of the gpu_acme example plugin: the module the entry point names."""

from aim_core import hookimpl
from aim_example_gpu_acme.vendor import AcmeGpuVendor


@hookimpl
def aim_gpu_vendors():
    return [AcmeGpuVendor()]
