# Two commands for a fresh machine:
#   make demo   set everything up, then run the main job
#   make test   set everything up, then run the test suite
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c constraints.txt
# apt-get needs root: run it directly as root (CI), through sudo otherwise
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup browser demo test clean

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/activate pyproject.toml constraints.txt
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

demo: setup
	$(BIN)/python -m hod.apps.demo

test: setup browser
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q -n 2

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache web/node_modules
