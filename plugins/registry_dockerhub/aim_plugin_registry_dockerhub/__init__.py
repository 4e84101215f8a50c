"""Docker Hub (docker.io): registry API at registry-1.docker.io with its token service, Hub API for wildcards."""
