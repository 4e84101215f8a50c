"""``aim-engine apply``: apply manifests and, with ``--with-status``, write their status too (F87).

Upstream's ``hack/apply-with-status.sh`` as a command: objects (with their
``status``) are applied by server-side apply as field manager
``aim-engine-apply``, then each ``status`` is written through the status
subresource, so a cluster can be seeded with Ready models and templates (for
demos and frozen tests). ``--freeze`` adds ``aim.eai.amd.com/reconciliation-paused:
"true"`` first, so the operator leaves the objects as written;
``--status-only`` writes only the status of objects that exist.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from aim_core.cli.common import add_cluster_options, add_filename_option, command_parser, error

FIELD_MANAGER = "aim-engine-apply"
PAUSED = "aim.eai.amd.com/reconciliation-paused"
# Set by the server, or naming objects by a uid the file cannot know (the garbage collector would delete an
# object whose owner's uid does not exist).
_SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "ownerReferences",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "apply",
        "apply manifests (server-side), optionally with their status",
        [
            "aim-engine apply -f examples/models.yaml --with-status --freeze",
            "kubectl get aimmodels -o yaml | aim-engine apply -f - --status-only",
        ],
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        codes="Exit status: 0 applied; 1 the cluster refused or cannot be reached; 2 bad usage, unreadable "
        "input or a kind apply does not take.",
    )
    add_filename_option(p, "manifests to apply", required=True)
    p.add_argument(
        "-n",
        "--namespace",
        default=None,
        help="namespace of namespaced objects that name none (default: the context's, else default)",
    )
    p.add_argument("--with-status", action="store_true", help="also write each object's status")
    p.add_argument("--status-only", action="store_true", help="write only the status (objects must exist)")
    p.add_argument(
        "--freeze",
        action="store_true",
        help=f'add the annotation {PAUSED}: "true" so the operator does not change them',
    )
    add_cluster_options(p)
    p.set_defaults(func=apply)


def prepared(doc: dict[str, Any], namespace: str, namespaced: bool, freeze: bool) -> dict[str, Any]:
    """The object to apply: server-set metadata, owner references and status dropped, namespace filled in,
    frozen if asked."""
    meta = {k: v for k, v in (doc.get("metadata") or {}).items() if k not in _SERVER_FIELDS}
    if namespaced:
        meta["namespace"] = meta.get("namespace") or namespace
    else:
        meta.pop("namespace", None)
    if freeze:
        meta["annotations"] = {**(meta.get("annotations") or {}), PAUSED: "true"}
    return {**{k: v for k, v in doc.items() if k not in ("metadata", "status")}, "metadata": meta}


def apply(args: argparse.Namespace) -> int:
    from aim_core.cli.common import on_cluster
    from aim_core.cli.inputs import load_documents
    from aim_core.reconcile import resources

    refs = {
        (r.api_version, r.kind): r
        for r in (
            *resources.AIM_RESOURCES,
            resources.NAMESPACES,
            resources.NODES,
            resources.SECRETS,
            resources.CONFIG_MAPS,
            resources.PVCS,
        )
    }
    docs = load_documents(args.filename)
    docs.sort(key=lambda d: d.get("kind") != "Namespace")  # namespaces before what goes into them
    unknown = sorted(
        {f"{d.get('apiVersion')}/{d.get('kind')}" for d in docs if (d.get("apiVersion"), d.get("kind")) not in refs}
    )
    if unknown:
        error(
            f"cannot apply {', '.join(unknown)}: only AIM kinds, Namespaces, Nodes, Secrets, ConfigMaps and "
            "PVCs; use kubectl apply for the others"
        )
        return 2

    async def write(cluster: Any) -> int:
        namespace = args.namespace or cluster.credentials.default_namespace or "default"
        for doc in docs:
            ref = refs[(doc["apiVersion"], doc["kind"])]
            obj = prepared(doc, namespace, ref.namespaced, args.freeze)
            meta = obj["metadata"]
            shown = f"{ref.kind.lower()}/{meta['name']}"
            done = []
            if not args.status_only:
                await cluster.apply(ref, obj, field_manager=FIELD_MANAGER)
                done.append("applied")
            if (args.with_status or args.status_only) and doc.get("status"):
                await cluster.patch(
                    ref,
                    meta.get("namespace"),
                    meta["name"],
                    {"status": doc["status"]},
                    subresource="status",
                    field_manager=FIELD_MANAGER,
                )
                done.append("status written")
            sys.stdout.write(f"{shown} {', '.join(done) or 'unchanged (no status)'}\n")
        return 0

    return 1 if on_cluster(args, write) is None else 0
