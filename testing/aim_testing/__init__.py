"""Test machinery of aim-engine (distribution aim-engine-testing, never in the operator image).

A Kubernetes API emulator, registry and Hub test servers, and the pytest fixtures
that core and plugin tests share (registered by the repository's root conftest.py).
"""
