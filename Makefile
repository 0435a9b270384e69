# The two quick-start commands: `make run` and `make test`. Each sets up what it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench system-deps deploy-test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# Debian packages the tests drive for real: a private redis-server per test session,
# Chromium for the web client's browser tests (Playwright cannot download a browser here), and
# HAProxy and docker-compose, which check and route with deploy/'s files (no Docker engine).
system-deps:
	@command -v redis-server >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-server; }
	@test -x /usr/bin/chromium || { apt-get update -qq && apt-get install -y -qq chromium; }
	@command -v haproxy >/dev/null || { apt-get update -qq && apt-get install -y -qq haproxy; }
	@command -v docker-compose >/dev/null || { apt-get update -qq && apt-get install -y -qq docker-compose; }

run: $(STAMP)
	$(BIN)/python -m server

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

test: $(STAMP) system-deps lint
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m load_tests.bench_rules

# The container deployment for real (as root: starts dockerd, builds a local Debian base once,
# brings compose.yaml up, plays a game while a node and Redis are killed, tears down). Not part
# of `make test`: about two minutes with the base cached, five the first time. See README.
deploy-test: $(STAMP)
	deploy/smoke.sh
