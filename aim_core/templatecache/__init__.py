"""AIMTemplateCache: one AIMArtifact per model source of a template (F66-F69).

* :mod:`.plan` -- the decisions, pure: which template, which artifacts to reuse or create,
  ``ArtifactsReady`` and ``status.artifacts``, what the finalizer deletes;
* :mod:`.controller` -- indexes, watches, observe and the finalizer.

No other kind imports the template cache.
"""
