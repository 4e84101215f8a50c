"""What several subcommands share: help texts and how errors are reported."""

from __future__ import annotations

import sys

GPU_PREFERENCE_HELP = (
    "GPU models best first for template auto-selection, comma-separated (e.g. MI355X,MI350X,MI325X,MI300X); "
    "models left out rank last, equal; default: $AIM_GPU_PREFERENCE, else upstream's MI325X,MI300X,MI250X,MI210"
)


def error(message: str) -> None:
    """One line on stderr, prefixed with the program name."""
    sys.stderr.write(f"aim-engine: {message}\n")
