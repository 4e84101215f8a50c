"""AIMTemplateCache: one AIMArtifact per model source of a template (F66-F69).

* :mod:`.plan` -- the decisions, pure: which template, which artifacts to reuse or create,
  ``ArtifactsReady`` and ``status.artifacts``, what the finalizer deletes;
* :mod:`.controller` -- indexes, watches, observe and the finalizer.

Other kinds read a template cache through :class:`CacheView` only.
"""

from aim_core.templatecache.view import CacheView

__all__ = ["CacheView"]
