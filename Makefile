# Antler: the two commands a fresh machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev

.PHONY: run test bench lint check clean browser bwrap messages

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

# The JS client DeerFlow's web UI uses, for tests/gateway/test_js_sdk.py, and the compressing
# reverse proxy Next.js serves it through (`compression` + `http-proxy`), for
# tests/gateway/test_sse_through_proxy.py (needs Node 20+ and npm).
JSDIR := $(VENV)/js
JSSDK := $(JSDIR)/node_modules/http-proxy

$(JSSDK):
	@mkdir -p $(JSDIR)
	@if command -v npm >/dev/null; then \
		cd $(JSDIR) && npm install --silent --no-audit --no-fund @langchain/langgraph-sdk@1.6.5 \
			compression@1.8.1 http-proxy@1.18.1 >/dev/null; \
	else echo "npm not found: the JS client test will be skipped"; fi

# Debian's chromium for the console's browser tests (tests/console/test_browser.py): installed
# with apt-get when missing and this is root; otherwise those tests skip (and fail under CI).
browser:
	@if ! command -v chromium >/dev/null && [ ! -x /usr/bin/chromium ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing chromium (apt-get) for the console's browser tests"; \
			apt-get update -qq >/dev/null && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else echo "chromium not found and not installable here: the browser tests will skip"; fi; \
	fi

# Debian's bubblewrap for the bwrap sandbox and its tests (tests/agent/test_sandbox_escapes.py):
# installed with apt-get when missing and this is root; otherwise those tests skip (and fail
# under CI).
bwrap:
	@if ! command -v bwrap >/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing bubblewrap (apt-get) for the sandbox tests"; \
			apt-get update -qq >/dev/null && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
		else echo "bwrap not found and not installable here: the sandbox tests will skip"; fi; \
	fi

config.yaml:
	cp config.example.yaml config.yaml

run: $(STAMP) config.yaml
	$(BIN)/antler serve --config config.yaml

# Tests run in parallel (pytest-xdist, two workers per core: about half of a test's time is
# spent waiting on a fake platform, a subprocess or a database, so two per core keep the cores
# busy; idle workers steal queued tests): each test has its own temp dir, ports, PostgreSQL
# schema and fake servers. mypy runs beside pytest. Bytecode is cached even where
# PYTHONDONTWRITEBYTECODE is set: without it every worker re-rewrites the asserts of every test
# module and every `antler serve` subprocess recompiles the project.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))

test: $(DEVSTAMP) $(JSSDK) browser bwrap
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(BIN)/mypy & mypy=$$!; \
	PYTHONDONTWRITEBYTECODE= ANTLER_JS_SDK_DIR=$(CURDIR)/$(JSDIR) \
		$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal; tests=$$?; \
	wait $$mypy; types=$$?; \
	[ $$tests -eq 0 ] && [ $$types -eq 0 ]

bench: $(DEVSTAMP)
	$(BIN)/python -m bench

check: $(STAMP) config.yaml
	$(BIN)/antler check --config config.yaml

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# The texts' template extracted from the code (bot/texts, the command summaries of
# bot/commands.py), merged into every catalog under bot/locales/: new ids arrive with an empty
# msgstr to fill in, ids no longer used are dropped (docs/configuration.md, "Languages").
messages: $(DEVSTAMP)
	$(BIN)/pybabel extract -F babel.cfg -k N_ -k register:2 -k _ -k gettext --no-default-keywords \
		--no-location --omit-header -w 100 -o $(VENV)/antler.pot .
	$(BIN)/pybabel update -i $(VENV)/antler.pot -d bot/locales -D antler -w 100 \
		--no-fuzzy-matching --ignore-obsolete
