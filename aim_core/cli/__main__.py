"""``python -m aim_core.cli``: the ``aim-engine`` command."""

from aim_core.cli import main

raise SystemExit(main())
