# Antler: the two commands a fresh machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev

.PHONY: run test bench lint check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

config.yaml:
	cp config.example.yaml config.yaml

run: $(STAMP) config.yaml
	$(BIN)/antler serve --config config.yaml

test: $(DEVSTAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

bench: $(DEVSTAMP)
	$(BIN)/python -m bench

check: $(STAMP) config.yaml
	$(BIN)/antler check --config config.yaml

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
