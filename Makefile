# Two commands for a fresh machine:
#   make demo   set everything up, then run the main job
#   make test   set everything up, then run the test suite
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c constraints.txt

.PHONY: setup demo test clean

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/activate pyproject.toml constraints.txt
	$(PIP) -e '.[bench,train,dev,rllib]'
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(BIN)/python -m hod.apps.demo

test: setup
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q -n 2

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
