"""What a structural CRD schema does to a custom resource on every write: pruning and defaulting.

The API server stores a custom resource in the shape its schema allows:

* fields the schema does not know are dropped (*pruned*), except under
  ``x-kubernetes-preserve-unknown-fields: true`` or ``additionalProperties``;
* ``null`` is dropped where the schema does not say ``nullable: true``;
* a ``default`` fills a field that is absent while the object holding it is
  present, and defaults apply again inside a value that was just defaulted;
* ``apiVersion``, ``kind`` and ``metadata`` are kept at the root and in embedded
  resources; everything else follows the schema. Empty maps and lists inside
  ``spec`` and ``status`` are kept as sent.

Not done here: validation, after this on the stored form
(:mod:`~aim_testing.emulator.validation`: required fields, types, bounds,
lengths, patterns, item counts, enums; not formats, list-map keys or CEL rules
other than immutability), and pruning inside ``metadata``.
"""

from __future__ import annotations

from aim_core.api.structural import prune_and_default

__all__ = ["prune_and_default"]
