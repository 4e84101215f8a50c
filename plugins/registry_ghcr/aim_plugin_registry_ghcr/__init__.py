"""GitHub Container Registry (ghcr.io): its token service, tag paging by Link, GitHub packages API for wildcards."""
