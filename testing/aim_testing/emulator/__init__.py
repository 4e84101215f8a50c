"""A Kubernetes API emulator for wire tests: kmock's KubernetesEmulator, made stricter.

:class:`Emulator` keeps kmock's discovery, object store, request log and reaction
DSL, and replaces the write path with the API server's semantics. Each module
says what it adds and where it deliberately differs from a real server:

* :mod:`~aim_testing.emulator.server` -- request handling, watches, the
  namespaces resource; writes happen in kmock's fallback reactions;
* :mod:`~aim_testing.emulator.storage` -- ``resourceVersion``, ``generation``,
  ``uid``, no-op writes, finalizers, owner-reference garbage collection;
* :mod:`~aim_testing.emulator.metadata` -- the ``status`` subresource, server-owned
  metadata, empty metadata maps not stored, 409 Conflict on a stale ``resourceVersion``;
* :mod:`~aim_testing.emulator.schemas` -- pruning and defaulting of custom
  resources by their structural schema;
* :mod:`~aim_testing.emulator.fieldsets` -- server-side apply and
  ``metadata.managedFields`` in the real ``FieldsV1`` format;
* :mod:`~aim_testing.emulator.patches` -- merge, JSON and strategic merge patches;
* :mod:`~aim_testing.emulator.selectors` -- label and field selectors;
* :mod:`~aim_testing.emulator.errors` -- ``Status`` error bodies with the real reasons;
* :mod:`~aim_testing.emulator.access` -- SubjectAccessReviews answered from the stored RBAC;
* :mod:`~aim_testing.emulator.calls` -- the call log (:class:`ApiCall`);
* :mod:`~aim_testing.emulator.declarations` -- the resources served.

Import from ``aim_testing.emulator``; the names below are its surface.
"""

from aim_testing.emulator.calls import READ_VERBS, WRITE_VERBS, ApiCall
from aim_testing.emulator.declarations import (
    ALL_VERBS,
    BUILTIN_RESOURCES,
    THIRD_PARTY_RESOURCES,
    declare,
    declare_crd,
    declare_resources,
)
from aim_testing.emulator.errors import api_error
from aim_testing.emulator.fieldsets import Path, fields_v1, flatten, merge_applied, paths_of, remove_path
from aim_testing.emulator.patches import APPLY, JSON_PATCH, MERGE, STRATEGIC, merge_patch, strategic_merge_patch
from aim_testing.emulator.selectors import Matcher, field_selector, label_selector, request_matcher
from aim_testing.emulator.server import Emulator

__all__ = [
    "ALL_VERBS",
    "APPLY",
    "BUILTIN_RESOURCES",
    "JSON_PATCH",
    "MERGE",
    "READ_VERBS",
    "STRATEGIC",
    "THIRD_PARTY_RESOURCES",
    "WRITE_VERBS",
    "ApiCall",
    "Emulator",
    "Matcher",
    "Path",
    "api_error",
    "declare",
    "declare_crd",
    "declare_resources",
    "field_selector",
    "fields_v1",
    "flatten",
    "label_selector",
    "merge_applied",
    "merge_patch",
    "paths_of",
    "remove_path",
    "request_matcher",
    "strategic_merge_patch",
]
