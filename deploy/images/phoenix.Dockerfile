# Arize Phoenix from PyPI on a Debian base: a stand-in for arizephoenix/phoenix where no registry
# can be reached. UI and OTLP/HTTP (/v1/traces) on 6006, OTLP/gRPC on 4317; data in /mnt/data.
#   podman build -f deploy/images/phoenix.Dockerfile -t zocrates-phoenix:bookworm deploy/images
# Behind a TLS-intercepting proxy: --secret id=pip_ca,src=/etc/ssl/certs/ca-certificates.crt
ARG BASE_IMAGE=zocrates-base:bookworm
FROM ${BASE_IMAGE}
ARG PHOENIX_VERSION=20.26.1

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN if ! command -v python3 >/dev/null 2>&1; then \
        apt-get update \
        && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
RUN --mount=type=secret,id=pip_ca \
    if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi \
    && pip install "arize-phoenix==${PHOENIX_VERSION}" \
    && python -c "import phoenix.server.main"

ENV PHOENIX_WORKING_DIR=/mnt/data \
    PHOENIX_HOST=0.0.0.0 \
    PHOENIX_PORT=6006 \
    PHOENIX_GRPC_PORT=4317
RUN mkdir -p /mnt/data
EXPOSE 6006 4317
ENTRYPOINT ["python", "-m", "phoenix.server.main"]
CMD ["serve"]
