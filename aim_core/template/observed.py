"""What the template controllers' observe step hands to the pure plan."""

from __future__ import annotations

import datetime
import enum
from collections.abc import Mapping

import attrs

from aim_core.reconcile.errors import ErrorInfo
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.obj import Obj
from aim_core.runtimeconfig import Resolution
from aim_core.template.scope import Scope


class Slot(str, enum.Enum):
    """The answer to "may this template start a discovery Job now?" (F34)."""

    NOT_ASKED = "NotAsked"  #: observe saw no need for a Job
    GRANTED = "Granted"  #: under the discovery lock, fewer than 10 Jobs were active
    LIMIT_REACHED = "LimitReached"  #: 10 discovery Jobs are active cluster-wide
    LOCK_BUSY = "LockBusy"  #: another operator replica holds the discovery Lease


@attrs.frozen
class Observed:
    """Inputs of :func:`aim_core.template.plan.plan_template`, all read before planning.

    :ivar namespace: where this template's discovery Jobs run.
    :ivar model: the bound model (F31), ``None`` when it does not exist.
    :ivar other_scope_model: a model of the name exists in the other scope (for Q10's message).
    :ivar model_is_cluster: ``model`` is an AIMClusterModel although the template is namespaced
        (a template a service derived from a cluster template, see :mod:`aim_core.template.plan`).
    :ivar counts: per GPU model, the most devices one node advertises.
    :ivar jobs: discovery Jobs owned by this template.
    :ivar pods: pods of the current discovery Job.
    :ivar output: the discovery container's log, when the Job succeeded and it was read.
    :ivar logs: failed discovery pods' log tails, by pod name.
    :ivar read_error: a failed log read.
    :ivar cache: the AIMTemplateCache named like the template (namespaced templates).
    :ivar now: the time of this reconcile (the plan reads no clock).
    :ivar benchmarks: Succeeded AIMBenchmarks that measured this template (its ``status.benchmarks``).
    """

    scope: Scope
    namespace: str
    config: Resolution
    model: Obj | None
    inventory: GpuInventory
    now: datetime.datetime
    other_scope_model: bool = False
    model_is_cluster: bool = False  #: a derived namespaced template bound to an AIMClusterModel
    counts: Mapping[str, int] = attrs.field(factory=dict)
    jobs: tuple[Obj, ...] = ()
    pods: tuple[Obj, ...] = ()
    output: str | None = None
    logs: Mapping[str, str] = attrs.field(factory=dict)
    read_error: ErrorInfo | None = None
    cache: Obj | None = None
    slot: Slot = Slot.NOT_ASKED
    slot_detail: str = ""
    benchmarks: tuple[Obj, ...] = ()
