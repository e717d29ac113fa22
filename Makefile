# Two commands for a fresh machine:
#   make demo   set everything up, then run the main job
#   make test   set everything up, then run the test suite
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c constraints.txt
# apt-get needs root: run it directly as root (CI), through sudo otherwise
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# torch's build (README, "Two commands on a fresh machine"): make setup TORCH=cpu|cuda
#   cpu   (default) the CPU build: a CPU wheel that pip finds without an index (find-links, as on
#         our machines), else torch alone from TORCH_INDEX, PyTorch's CPU index; if that index
#         does not answer within 10 s, a warning and the package index's torch
#   cuda  the package index's torch, on Linux x86_64 the CUDA build (several GB of nvidia-*
#         wheels); or from TORCH_INDEX if set (e.g. https://download.pytorch.org/whl/cu126)
TORCH ?= cpu
ifeq ($(TORCH),cpu)
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
else ifeq ($(TORCH),cuda)
TORCH_INDEX ?=
else
$(error TORCH=$(TORCH): legal values cpu (default), cuda)
endif

# The core on the newest gymnasium: Ray pins gymnasium 1.2.2 in .venv (the rllib extra), so a
# second small venv (the core and the dev extra: no torch, no Ray) runs the env tests.
CORE_VENV ?= .venv-core
CORE_TESTS := tests/contract/test_env_contract.py tests/games/test_tapeo_env.py tests/games/test_robada_env.py \
	tests/adapters/test_single_agent_actions.py

.PHONY: setup browser demo test test-core clean screenshots

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/activate pyproject.toml constraints.txt
ifeq ($(TORCH),cpu)
	@if $(PIP) --dry-run --no-deps --no-index --ignore-installed --report - torch 2>/dev/null \
			| grep -q '"version": "[^"]*+cpu"'; then \
		echo "torch: a CPU wheel found without an index"; \
	elif $(BIN)/python -c "import urllib.request as u; u.urlopen('$(TORCH_INDEX)/torch/', timeout=10)" 2>/dev/null; then \
		echo "torch: the CPU build from $(TORCH_INDEX)"; $(PIP) --index-url $(TORCH_INDEX) torch; \
	else \
		echo "warning: $(TORCH_INDEX) did not answer and no CPU wheel was found: torch comes from the package index (on Linux x86_64 its CUDA build)" >&2; \
	fi
else ifneq ($(TORCH_INDEX),)
	$(PIP) --index-url $(TORCH_INDEX) torch
endif
	$(PIP) -e '.[bench,train,dev,web,rllib]'
	touch $@

setup: $(VENV)/.installed

# The browser tests' extras: onnxruntime-web from npm (web/package-lock.json; web/node_modules is
# git-ignored, no install scripts run) and Debian's chromium for Playwright (apt-get, only when
# no chromium is on PATH; Playwright downloads no browser).
web/node_modules/.package-lock.json: web/package.json web/package-lock.json
	cd web && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

browser: web/node_modules/.package-lock.json
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
		{ $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }

# The web page's screenshots in docs/ (docs/web.md): every screen of both games at 390 and 1280 px.
screenshots: setup browser
	HOD_WEB_SCREENSHOTS=docs $(BIN)/python -m pytest -q tests/apps/test_web_play.py -k whole_game

$(CORE_VENV)/.installed: pyproject.toml constraints.txt
	$(PY) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/pip install -q -c constraints.txt -e '.[dev]'
	touch $@

demo: setup
	$(BIN)/python -m hod.apps.demo

test: setup browser
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q -n 2
	$(MAKE) --no-print-directory test-core

test-core: $(CORE_VENV)/.installed
	@$(CORE_VENV)/bin/python -c "import gymnasium; print('core venv (no torch, no Ray): gymnasium', gymnasium.__version__)"
	$(CORE_VENV)/bin/python -m pytest -q $(CORE_TESTS)

clean:
	rm -rf $(VENV) $(CORE_VENV) *.egg-info .pytest_cache web/node_modules
