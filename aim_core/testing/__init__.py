"""Test support shipped with the core: a Kubernetes API emulator and fixtures."""
