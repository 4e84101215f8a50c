"""Pytest fixtures shared by core and plugin tests."""
