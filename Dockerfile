# Operator image: the core and every shipped plugin in one virtual environment, run as a
# non-root user. Build: docker build -t <registry>/aim-engine:<tag> .
# (Not built by CI here: the development machines have no Docker engine.)
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY aim_core ./aim_core
COPY plugins ./plugins
RUN python -m venv /opt/aim \
 && /opt/aim/bin/pip install --no-cache-dir . ./plugins/*/

FROM python:3.11-slim
COPY --from=build /opt/aim /opt/aim
ENV PATH=/opt/aim/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["aim-engine"]
CMD ["run", "-A", "--leader-elect", "--liveness", "http://0.0.0.0:8081/healthz"]
