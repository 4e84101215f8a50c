"""A real OCI registry on loopback for tests: Debian's ``docker-registry`` plus helpers.

Fixtures (available to every test under ``tests/`` and ``plugins/*/tests/``):

``oci_registry``, ``oci_registry_basic``, ``oci_registry_token`` (session scope)
    A running registry, as a :class:`Registry`: anonymous; htpasswd Basic auth;
    the bearer-token flow through a local token service
    (``registry_token_server``). ``.host`` is ``127.0.0.1:PORT`` (the registry
    part of image references; loopback is plain HTTP for the operator),
    ``.credentials`` the ``RegistryCredentials`` to read with (``None`` when
    anonymous) and ``.pull_secret(name, namespace)`` a
    ``kubernetes.io/dockerconfigjson`` Secret holding them.
``registry_front`` (factory)
    ``front = registry_front(registry, page_size=100)``: a proxy that pages
    ``tags/list`` with ``n``/``last``/``Link``, injects faults
    (``front.fail(r"/manifests/", 503, times=2)``, ``front.fail(..., 429,
    retry_after="1")``), stalls requests (``front.stall(path, seconds)``), and
    logs every request (``front.requests(r"/blobs/")``). Use ``front.registry``
    (same credentials, the front's address) for image references.
``unique_repo``
    A repository name of the test's own (the session registries are shared).
``fast_registry_retries``
    Millisecond backoff and a 2 s request timeout for clients made afterwards.

Filling a registry (plain HTTP, no Docker)::

    pushed = oci_registry.push_image(unique_repo, "1.0", labels={"org.amd.silogen.model.canonicalName": "x"})
    pushed.reference, pushed.digest                  # "127.0.0.1:PORT/t/...:1.0", "sha256:..."
    oci_registry.push_image(repo, "1.0", docker=True)  # Docker v2 media types instead of OCI
    oci_registry.push_index(repo, "multi", {"linux/amd64": {"a": "1"}, "linux/arm64": {"a": "2"}})
    oci_registry.tag(repo, "1.0", ["1.1", "latest"])    # more tags, one PUT each
    oci_registry.add_tags(repo, pushed.digest, [f"0.0.{i}" for i in range(1000)])  # thousands, instantly

Reading through the operator's own code::

    from aim_core.plugin.manager import get_plugin_manager
    from aim_core.registry import ImageReference, fetch_image_info
    pm = get_plugin_manager(only=["registry_oci"], disabled=())
    info = await fetch_image_info(pm, ImageReference.parse(pushed.reference), oci_registry_basic.credentials)

A model or source wire test creates ``registry.pull_secret("pull", ns)`` in the
emulator and points ``spec.image`` at ``pushed.reference``. Tests are skipped
when ``docker-registry`` is not installed (``./scripts/setup`` installs it).
"""

from aim_testing.registry.front import RegistryFront
from aim_testing.registry.images import PushedImage, Registry
from aim_testing.registry.jsonapi import ApiRequest, JsonApi
from aim_testing.registry.server import BlobCdn, RegistryServer, TokenServer, find_registry_binary

__all__ = [
    "ApiRequest",
    "BlobCdn",
    "JsonApi",
    "PushedImage",
    "Registry",
    "RegistryFront",
    "RegistryServer",
    "TokenServer",
    "find_registry_binary",
]
