# The two quick-start commands: `make run` and `make test`. Each sets up what it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench system-deps deploy-test constraints

# constraints.txt pins every package to the versions make test last passed with, so a release
# upstream (a newly typed redis-py, a stricter mypy) cannot fail CI on a clean clone.
$(STAMP): pyproject.toml constraints.txt setup.py server/core/bots/_walks.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	touch $@

# Re-resolve the newest versions pyproject.toml allows in a scratch venv and pin them.
constraints:
	rm -rf .venv-constraints
	$(PYTHON) -m venv .venv-constraints
	.venv-constraints/bin/pip install -q -e '.[dev]'
	{ head -2 constraints.txt; .venv-constraints/bin/pip freeze --exclude-editable; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf .venv-constraints

# Debian packages the tests drive for real: a private redis-server and a private PostgreSQL per
# test session (Debian keeps initdb off PATH, in /usr/lib/postgresql/N/bin: tests/support/postgres.py),
# Chromium for the web client's browser tests (Playwright cannot download a browser here), and
# HAProxy and docker-compose, which check and route with deploy/'s files (no Docker engine).
system-deps:
	@command -v redis-server >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-server; }
	@command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq postgresql; }
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
