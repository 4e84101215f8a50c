"""Storage quotas and eviction (D32-D34). Pure.

``artifactStorageQuota`` (AIMClusterRuntimeConfig only) caps the storage
allocated to artifact PVCs: ``clusterLimit`` over all namespaces,
``defaultNamespaceLimit`` per namespace. Allocated storage is what the PVCs
request (size plus headroom, whole GiB), counted from ``status.allocatedSize``
of artifacts that are not being deleted.

Before an artifact's PVC is created, its allocation must fit both limits.
When it does not, idle artifacts may make room. An artifact can be evicted
when it is Ready, no live service uses it, and it has a retention priority
(its own ``spec.retentionPriority``, else its runtime config's
``artifact.defaultRetentionPriority``). Candidates are taken lowest priority
first, then least recently used (``status.lastUsed``, else creation time),
then by namespace and name, until both limits fit; the namespace limit only
takes candidates of the same namespace. If evicting every candidate would
still not make room, nothing is evicted and the artifact waits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from aim_core.artifact.observed import Candidate, Quota, Usage
from aim_core.artifact.quantities import GIB


@attrs.frozen
class Decision:
    fits: bool
    victims: tuple[Candidate, ...] = ()
    message: str = ""


def gib(n: int) -> str:
    """A byte count as GiB text for messages (``12.5 GiB``)."""
    value = n / GIB
    return f"{value:.0f} GiB" if value == int(value) else f"{value:.1f} GiB"


def eviction_order(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Evictable candidates, first to go first."""
    evictable = [c for c in candidates if c.ready and not c.in_use and c.retention_priority is not None]
    return sorted(evictable, key=lambda c: (c.retention_priority, c.last_used, c.namespace, c.name))


def _take(order: Sequence[Candidate], chosen: list[Candidate], excess: int) -> int:
    """Add candidates from ``order`` to ``chosen`` until ``excess`` bytes are freed; the bytes still missing."""
    for candidate in order:
        if excess <= 0:
            break
        if candidate in chosen:
            continue
        chosen.append(candidate)
        excess -= candidate.allocated_bytes
    return excess


def decide(need: int, namespace: str, quota: Quota, usage: Usage) -> Decision:
    """Whether ``need`` more bytes fit in ``namespace``, and which artifacts to evict to make them fit."""
    if quota.cluster_limit is None and quota.namespace_limit is None:
        return Decision(True)
    order = eviction_order(usage.candidates)
    chosen: list[Candidate] = []
    problems: list[str] = []
    if quota.namespace_limit is not None:
        excess = usage.namespace_bytes + need - quota.namespace_limit
        missing = _take([c for c in order if c.namespace == namespace], chosen, excess)
        if missing > 0:
            problems.append(
                f"namespace {namespace} would hold {gib(usage.namespace_bytes + need)} of artifact storage, over its "
                f"limit of {gib(quota.namespace_limit)} ({gib(usage.namespace_bytes)} in use)"
            )
    if quota.cluster_limit is not None:
        freed = sum(c.allocated_bytes for c in chosen)
        excess = usage.cluster_bytes - freed + need - quota.cluster_limit
        missing = _take(order, chosen, excess)
        if missing > 0:
            problems.append(
                f"the cluster would hold {gib(usage.cluster_bytes + need)} of artifact storage, over its limit of "
                f"{gib(quota.cluster_limit)} ({gib(usage.cluster_bytes)} in use)"
            )
    if problems:
        evictable = sum(c.allocated_bytes for c in order)
        hint = (
            f"; idle artifacts with a retention priority hold only {gib(evictable)}"
            if order
            else "; no idle artifact with a retention priority can be evicted"
        )
        return Decision(
            False,
            (),
            "; ".join(problems)
            + hint
            + f" ({quota.source}: raise the limit, delete unused artifacts or give them a retentionPriority)",
        )
    if not chosen:
        return Decision(True)
    names = ", ".join(f"{c.namespace}/{c.name}" for c in chosen)
    return Decision(
        False, tuple(chosen), f"evicting idle artifacts {names} to free {gib(sum(c.allocated_bytes for c in chosen))}"
    )
