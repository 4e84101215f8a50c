"""Autoscaling: KEDA through KServe's integration, OpenTelemetry pod metrics."""
