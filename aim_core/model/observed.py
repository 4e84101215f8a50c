"""What the model controllers' observe step hands to the pure plan."""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.reconcile.errors import ErrorInfo
from aim_core.registry.errors import ImageInfo, RegistryError
from aim_core.registry.reference import ImageReference
from aim_core.runtimeconfig import Resolution

NAMESPACE = "Namespace"
CLUSTER = "Cluster"


@attrs.frozen
class Lookup:
    """The outcome of asking for one image: ``info`` or ``error``, and when to ask again after an error."""

    info: ImageInfo | None = None
    error: RegistryError | None = None
    retry_in: float | None = None  #: seconds until the next registry call is allowed
    backoff: float | None = None  #: the whole wait after this failure (stable: fit for messages)
    fetched: bool = False  #: whether this answer cost a registry call just now


@attrs.frozen
class Observed:
    """Inputs of :func:`aim_core.model.plan.plan_model`, all read before planning.

    :ivar scope: ``Namespace`` for an AIMModel, ``Cluster`` for an AIMClusterModel.
    :ivar config: the resolved runtime config.
    :ivar source: where the metadata comes from (:func:`aim_core.model.images.metadata_source`).
    :ivar reference: ``spec.image`` parsed, None when it is not a valid reference.
    :ivar reference_error: why ``spec.image`` is not a valid reference.
    :ivar secret_problems: referenced pull secrets that are missing or of the wrong type
        (only looked at when the registry is to be asked).
    :ivar credentials_error: a pull secret whose content cannot be read.
    :ivar read_errors: reads that failed (e.g. a pull secret the API server would not give).
    :ivar lookup: the registry's answer, when it was asked.
    :ivar templates: every template serving this model (``spec.modelName``, same scope).
    """

    scope: str
    config: Resolution
    source: str
    reference: ImageReference | None = None
    reference_error: str | None = None
    secret_problems: tuple[tuple[str, str], ...] = ()  # (reason, message)
    credentials_error: str | None = None
    read_errors: tuple[ErrorInfo, ...] = ()
    lookup: Lookup | None = None
    templates: tuple[dict[str, Any], ...] = ()
