# Operator image: the core and the plugins named in PLUGINS in one virtual environment,
# run as a non-root numeric user on a read-only root filesystem.
#   docker build -t <registry>/aim-engine:<tag> .
#   docker build --build-arg PLUGINS="kserve gateway registry_dockerhub gpu_amd" -t ... .
# (Not built by CI here: the development machines have no Docker engine; tests/test_images.py
# checks this file against the repository and the installed packages instead.)
#
# At run time it writes nothing into the image: HOME, TMPDIR and caches are under /tmp,
# which the Deployment mounts as an emptyDir (deploy/manager.yaml, charts/aim-engine), and
# no bytecode is written (it is compiled at build time).
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
# Plugin distributions to install, by folder name under plugins/ (docs/plugins.md).
ARG PLUGINS="kserve lws gateway keda registry_dockerhub registry_ghcr gpu_amd gpu_nvidia bench_genai"
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY aim_core ./aim_core
COPY plugins ./plugins
RUN set -eu; \
    wanted=""; \
    for name in $PLUGINS; do \
      if [ ! -f "plugins/$name/pyproject.toml" ]; then echo "PLUGINS names $name: no plugins/$name" >&2; exit 1; fi; \
      wanted="$wanted ./plugins/$name"; \
    done; \
    python -m venv /opt/aim; \
    /opt/aim/bin/pip install . $wanted; \
    /opt/aim/bin/python -m compileall -q /opt/aim/lib

FROM ${PYTHON_IMAGE}
COPY --from=build /opt/aim /opt/aim
ENV PATH=/opt/aim/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    XDG_CACHE_HOME=/tmp/.cache
WORKDIR /
USER 65532:65532
# /metrics on 8443 (HTTPS, for clients allowed to get /metrics), /healthz and /readyz on 8081 (docs/metrics.md)
EXPOSE 8443 8081
ENTRYPOINT ["aim-engine"]
CMD ["run", "-A", "--leader-elect", "--metrics-bind-address=:8443", "--health-probe-bind-address=:8081"]
