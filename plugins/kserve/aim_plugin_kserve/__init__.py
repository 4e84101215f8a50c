"""Runtime builder: KServe InferenceService for AIMService."""
