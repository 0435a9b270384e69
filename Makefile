# The two quick-start commands: `make run` and `make test`. Each sets up what it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench system-deps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# Debian packages the tests drive for real: a private redis-server per test session, and
# Chromium for the web client's browser tests (Playwright cannot download a browser here).
system-deps:
	@command -v redis-server >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-server; }
	@test -x /usr/bin/chromium || { apt-get update -qq && apt-get install -y -qq chromium; }

run: $(STAMP)
	$(BIN)/python -m server

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP) system-deps lint
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m load_tests.bench_rules
