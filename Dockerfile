# syntax=docker/dockerfile:1.7
#
# One image for every kronii service. The service is chosen by KRONII_SERVICE, which the
# entrypoint turns into `python -m kronii.<service>`:
#
#   docker build -t kronii:dev .                                   # default service: sensor
#   docker build -t kronii-pipeline --build-arg KRONII_SERVICE=pipeline .
#   docker run -e KRONII_SERVICE=pipeline kronii:dev               # override at run time
#
# Other one-shot commands (migrations) replace the entrypoint: `--entrypoint /app/.venv/bin/kronii kronii:dev migrate`.
# Nothing secret is baked in: every URL and password comes from the environment at run time.
# docs/operations.md describes the image, compose and the Helm chart.

# The base image, pinned by digest so a rebuild gets the same bytes (the tag alone floats with every
# Debian and CPython patch release). To move to a newer python:3.11-slim, look its digest up and
# override or update this default:
#   docker buildx imagetools inspect python:3.11-slim     # "Digest:" of the multi-platform index
#   docker build --build-arg PYTHON_IMAGE=python:3.11-slim@sha256:<digest> .
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

# ---- build: resolve the locked dependencies into /app/.venv -------------------------------------------
FROM ${PYTHON_IMAGE} AS manifests
# Only the files that decide the dependency set, so the dependency layer below is rebuilt when
# uv.lock or a pyproject.toml changes, not on every source edit.
WORKDIR /src
COPY . .
RUN mkdir -p /manifests \
 && cp pyproject.toml uv.lock /manifests/ \
 && find libs services -mindepth 2 -maxdepth 2 -name pyproject.toml -exec cp --parents {} /manifests/ \;

FROM ${PYTHON_IMAGE} AS build
ARG UV_VERSION=0.13.9
RUN pip install --no-cache-dir "uv==${UV_VERSION}"
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/local/bin/python3.11 \
    UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /app
COPY --from=manifests /manifests/ /app/
# Third-party packages only (the workspace members have no sources yet at this point).
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --all-packages --no-install-workspace
# The workspace itself, installed as regular (non-editable) packages so that /app/.venv stands alone.
COPY . /app
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --all-packages --no-editable

# ---- runtime: the virtualenv and nothing else ---------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime
ARG KRONII_SERVICE=sensor
LABEL org.opencontainers.image.title="kronii" \
      org.opencontainers.image.description="kronii services; choose one with KRONII_SERVICE" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 kronii \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin kronii \
 && install -d -o 10001 -g 10001 -m 0700 /var/lib/kronii
COPY --from=build /app/.venv /app/.venv
ENV KRONII_SERVICE=${KRONII_SERVICE} \
    KRONII_DATA_DIR=/var/lib/kronii \
    HOME=/tmp \
    PATH=/app/.venv/bin:${PATH} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
WORKDIR /app
USER 10001:10001
# HTTP (/healthz, /readyz, /metrics) on 81xx and gRPC (grpc.health.v1) on 71xx, one pair per service.
EXPOSE 8101-8106 7101-7106
STOPSIGNAL SIGTERM
# Healthy while the service's own /readyz answers 200 (every required dependency ready). The port and
# address come from the service's settings (KRONII_<SERVICE>_HTTP_PORT, KRONII_<SERVICE>_HOST), the
# same ones the service listens on; a wildcard bind is probed on loopback. Compose may override it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/app/.venv/bin/python", "-c", "import importlib, os, urllib.request; spec = importlib.import_module('kronii.' + os.environ['KRONII_SERVICE'] + '.service').SERVICE; s = spec.settings_cls(); host = '127.0.0.1' if s.host in ('', '0.0.0.0', '::') else s.host; host = '[' + host + ']' if ':' in host else host; urllib.request.urlopen(f'http://{host}:{s.http_port}/readyz', timeout=4)"]
# `exec` replaces the shell with python, so SIGTERM from `docker stop` or the kubelet reaches the service.
ENTRYPOINT ["/bin/sh", "-c", "exec /app/.venv/bin/python -m \"kronii.${KRONII_SERVICE}\" \"$@\"", "kronii"]
