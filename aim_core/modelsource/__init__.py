"""AIMClusterModelSource: AIMClusterModels created from registry listings (F77-F80).

* :mod:`.selectors`, :mod:`.versions` -- what a source asks for (images, filters, semver constraints);
* :mod:`.sync` -- listing the selectors against registries (the only network step), run off the
  reconcile path by :mod:`.runner`; :mod:`.intervals` -- when it syncs again;
* :mod:`.secrets` -- the source's pull secrets; :mod:`.preview` -- ``aim-engine tags``;
* :mod:`.observed`, :mod:`.plan` -- what a sync produced and the pure plan;
* :mod:`.controller` -- wiring only.

No other kind imports the model source.
"""
