"""AIMArtifact: model weights downloaded into a PVC (F70-F76). Pure observe -> plan pieces.

* :mod:`.validation` -- hostile specs (source, size, download filter) become ``InvalidSpec``;
* :mod:`.quantities` -- quantities as bytes, PVC sizing, ``displaySize``;
* :mod:`.children` -- the check-size Job, the PVC, the status-updater RoleBinding, the download Job;
* :mod:`.progress` -- the size-check output line and the download phase (``DownloadComplete``);
* :mod:`.quota` -- storage quotas and eviction of idle artifacts;
* :mod:`.observed` -- what a reconcile reads;
* :mod:`.plan` -- the plan itself.

The thin controller is :mod:`aim_core.artifact.controller`. No other kind imports the artifact.
"""
