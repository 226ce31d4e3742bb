# Zocrates: `make help` lists every target.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
PHOENIX_VENV := .venv-phoenix
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed
PLUGIN := zotero-plugin
PLUGIN_STAMP := $(PLUGIN)/node_modules/.installed

.PHONY: help venv run phoenix phoenix-deps test test-unit test-integration test-e2e test-plugin plugin plugin-deps \
	protos protos-check wire-golden wire-golden-check lint fmt clean

help: ## List every target
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

$(STAMP): pyproject.toml requirements/constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements/constraints.txt -e '.[dev]'
	@touch $(STAMP) $(RUN_STAMP)

# What running needs and nothing more: the services and the reranker's ONNX models (`ml`), no
# torch, no test or lint tools. `make test` (through $(STAMP)) adds the rest to the same .venv.
$(RUN_STAMP): pyproject.toml requirements/constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements/constraints.txt -e '.[ml]'
	@touch $(RUN_STAMP)

venv: $(STAMP) ## Create .venv and install Zocrates with its pinned dependencies and dev tools

# Arize Phoenix pins what the project pins differently (requirements/phoenix.txt): its own venv.
$(PHOENIX_STAMP): requirements/phoenix.txt
	@test -x $(PHOENIX_VENV)/bin/python || $(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install --quiet --upgrade pip
	$(PHOENIX_VENV)/bin/pip install --quiet -r requirements/phoenix.txt
	@touch $(PHOENIX_STAMP)

phoenix-deps: $(PHOENIX_STAMP) ## Install Arize Phoenix into .venv-phoenix (tests/e2e/test_phoenix.py needs it)

phoenix: $(PHOENIX_STAMP) ## Serve Arize Phoenix: UI on http://127.0.0.1:6006, OTLP on :4317 (services started after it find it)
	PHOENIX_HOST=127.0.0.1 PHOENIX_WORKING_DIR=$${PHOENIX_WORKING_DIR:-$$HOME/.phoenix} $(PHOENIX_VENV)/bin/phoenix serve

$(PLUGIN_STAMP): $(PLUGIN)/package.json $(PLUGIN)/package-lock.json
	cd $(PLUGIN) && npm ci --no-audit --no-fund
	@touch $(PLUGIN_STAMP)

plugin-deps: $(PLUGIN_STAMP) ## Install the Zotero plugin's pinned npm packages

plugin: $(PLUGIN_STAMP) ## Build the Zotero plugin: zotero-plugin/build/zocrates.xpi
	cd $(PLUGIN) && npm run build

run: $(RUN_STAMP) ## Start every service on embedded defaults (Ctrl-C stops them); installs only what running needs
	$(BIN)/zocrates run

test: $(STAMP) $(PLUGIN_STAMP) $(PHOENIX_STAMP) ## Run the whole test suite (needs ZOCRATES_TEST_REDIS_URL / _POSTGRES_URL or Docker)
	$(BIN)/pytest
	cd $(PLUGIN) && npm test

test-plugin: $(PLUGIN_STAMP) ## Run the Zotero plugin's logic tests (node --test)
	cd $(PLUGIN) && npm test

test-unit: $(STAMP) ## Run the unit tests only (no servers)
	$(BIN)/pytest tests/unit

test-integration: $(STAMP) ## Run the integration tests (real services in-process)
	$(BIN)/pytest tests/integration

test-e2e: $(STAMP) $(PHOENIX_STAMP) ## Run the end-to-end tests (real processes)
	$(BIN)/pytest tests/e2e

protos: $(STAMP) ## Regenerate the gRPC code in protos/gen from protos/zocrates
	$(BIN)/python scripts/gen_protos.py

protos-check: $(STAMP) ## Fail if protos/gen drifted from the .proto sources
	@tmp=$$(mktemp -d) && $(BIN)/python scripts/gen_protos.py --out $$tmp/gen && \
		diff -r -x __pycache__ $$tmp/gen protos/gen && rm -rf $$tmp && echo "protos: no drift"

wire-golden: $(STAMP) ## Regenerate the plugin's wire fixtures (zotero-plugin/test/golden) from the agent's code
	$(BIN)/python scripts/wire_golden.py

wire-golden-check: $(STAMP) ## Fail if the plugin's wire fixtures drifted from what the agent and gateway send
	$(BIN)/python scripts/wire_golden.py --check

lint: $(STAMP) $(PLUGIN_STAMP) protos-check wire-golden-check ## ruff, import rules, mypy on the services; eslint + prettier on the plugin
	$(BIN)/ruff check .
	$(BIN)/python scripts/check_imports.py
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	cd $(PLUGIN) && npm run --silent lint

fmt: $(STAMP) $(PLUGIN_STAMP) ## Format and auto-fix with ruff, prettier and eslint
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	cd $(PLUGIN) && npm run --silent format

clean: ## Remove the virtual environment and caches
	rm -rf $(VENV) $(PHOENIX_VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info \
		$(PLUGIN)/node_modules $(PLUGIN)/build
