"""AIMServiceTemplate and AIMClusterServiceTemplate: observe -> pure plan (F31-F42).

* :mod:`.scope` -- :class:`Scope`, namespaced or cluster-wide (the one other kinds use);
* :mod:`.view` -- :class:`TemplateView`, a template as code reads it (the service reads templates through it);
* :mod:`.observed` -- what the controller reads before planning;
* :mod:`.hardware` -- GPU gating against the node inventory, resolved hardware,
  summary and node affinity (F39-F41);
* :mod:`.discovery` -- the discovery Job, its output and the retry breaker (F33-F36);
* :mod:`.plan` -- :func:`~aim_core.template.plan.plan_template`, the whole decision.

The controllers that wire this to the engine live in
:mod:`aim_core.template.controller`. Other kinds import only the names below.
"""

from aim_core.template.scope import Scope
from aim_core.template.view import TemplateView

__all__ = ["Scope", "TemplateView"]
