"""Registry listing for GitHub Container Registry (ghcr.io)."""
