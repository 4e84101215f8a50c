"""The operator process: login, streams, probes, leader election, ``aim-engine run``.

kopf looks for the kubernetes client's model classes when it is first imported (to accept them as
bodies). The operator hands kopf none, and the client with the pydantic models it brings would stay
resident (about 16 MB) in a process that reads its kubeconfig once, in a child process
(:mod:`aim_core.operator.login`). So kopf is imported here, before any module of this package,
without them; the client stays importable for whoever needs it later.
"""

import sys

if "kopf" not in sys.modules:
    _hidden = [name for name in ("kubernetes", "kubernetes_asyncio", "pykube") if name not in sys.modules]
    for _name in _hidden:
        sys.modules[_name] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import kopf  # noqa: F401
    finally:
        for _name in _hidden:
            if sys.modules.get(_name, False) is None:
                del sys.modules[_name]
