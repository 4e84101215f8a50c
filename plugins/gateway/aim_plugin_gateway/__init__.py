"""Routing: Gateway API HTTPRoute for AIMService."""
