"""Hook implementations of the registry_dockerhub plugin."""

from aim_core import hookimpl
from aim_plugin_registry_dockerhub.client import DOCKER_HUB, DockerHubClient


@hookimpl
def aim_registry_client(registry):
    return DockerHubClient() if registry == DOCKER_HUB else None
