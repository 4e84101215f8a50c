"""Registry listing for Docker Hub (docker.io)."""
