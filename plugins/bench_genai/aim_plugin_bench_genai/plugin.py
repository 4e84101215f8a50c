"""Hook implementations of the bench_genai plugin."""

from aim_core import hookimpl
from aim_plugin_bench_genai.tool import GenaiBench


@hookimpl
def aim_benchmark_tools():
    return [GenaiBench()]
