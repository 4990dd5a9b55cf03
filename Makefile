# The README's two commands are `make up` and `make test`. Each installs what it needs first.
SHELL := /bin/bash
.DEFAULT_GOAL := help
UV ?= $(shell command -v uv 2>/dev/null)
VENV := .venv
PY := $(VENV)/bin/python
export UV_PYTHON_DOWNLOADS := never

.PHONY: help deps sysdeps pydeps agentdeps up test test-slow lint proto proto-check bench clean

help:
	@echo "make up         run kronii on this machine (installs what it needs first)"
	@echo "make test       run the test suite (installs what it needs first)"
	@echo "make test-slow  run the slow suites too"
	@echo "make lint       ruff + mypy"
	@echo "make proto      regenerate libs/api from proto/"
	@echo "make bench      run the benchmarks under bench/"

sysdeps:
	@bash scripts/install_system_deps.sh

pydeps:
	@bash scripts/install_python_deps.sh

agentdeps:
	@bash scripts/install_agent_clis.sh

deps: sysdeps pydeps agentdeps

up: deps
	$(VENV)/bin/kronii up

test: deps
	$(PY) -m pytest

test-slow: sysdeps agentdeps
	@KRONII_PY_EXTRAS=llamacpp bash scripts/install_python_deps.sh
	$(PY) -m pytest -m ''

lint: pydeps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) scripts/check_shape.py
	$(VENV)/bin/mypy libs/foundation/src libs/stores/src libs/edge/src libs/runtime/src libs/launcher/src libs/agents/src libs/desktop/src libs/llm/src libs/redaction/src libs/crypto/src services/sensor/src services/supervisor/src services/capture/src services/pipeline/src services/scheduler/src services/broker/src services/critic/src services/vision/src services/console/src tests bench

proto: pydeps
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH bash scripts/gen_proto.sh

proto-check: proto
	@git diff --exit-code -- libs/api/src || { echo "generated protobuf code is stale: run 'make proto' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- libs/api/src)" || { git status --porcelain -- libs/api/src; echo "generated protobuf code is stale: run 'make proto' and commit"; exit 1; }

bench: deps
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache tests/agents/node_modules
