"""``python -m aim_core``: the ``aim-engine`` command."""

from aim_core.cli import main

raise SystemExit(main())
