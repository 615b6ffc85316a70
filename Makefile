# threadcost: `make paper` runs the study, `make test` checks it.
# Each target bootstraps what it needs (.venv, compiled kernels) on a fresh clone.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PARAMS ?= params/default.yaml
# Where `make paper` writes the executed notebooks and the rendered HTML.
PAPER_DIR ?= build/paper
NATIVE_SRC := $(wildcard native/*.c native/*.h) native/build_native.py
NATIVE_LIB := threadcost/.native.stamp

.PHONY: help setup native paper test lab clean lint sanitize peers browser-deps reference

help:
	@echo "make paper    run every notebook (params: $(PARAMS)) -> data/, figures/, $(PAPER_DIR)/"
	@echo "make test     the test suite (notebooks with params/quick.yaml)"
	@echo "make lab      JupyterLab on the notebooks"
	@echo "make setup    .venv with pinned dependencies + compiled C kernels"
	@echo "make sanitize C kernels under ASan+UBSan (and TSan)"
	@echo "make clean    remove build outputs (never data/)"

$(VENV)/.installed: pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "threadcost needs Python 3.11+ (set PYTHON=...)")'
	@command -v cc >/dev/null || { echo "threadcost needs a C compiler (apt-get install build-essential)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

# Rebuild the kernels in place whenever a C source or header changes.
$(NATIVE_LIB): $(VENV)/.installed $(NATIVE_SRC)
	$(BIN)/python native/build_native.py
	@touch $@

# Small static helpers of 03_launch, built from native/ subfolders (outside the
# extension's native/*.c glob): the program posix_spawn starts, and the small
# clean process launches are timed from (launch.py also builds them if missing).
LAUNCH_TOOLS := build/native/spawn_target build/native/launch_driver

build/native/spawn_target: native/spawn_target/spawn_target.c
	@mkdir -p $(@D)
	cc -O2 -Wall -Wextra -Werror -static -o $@ $< || cc -O2 -Wall -Wextra -Werror -o $@ $<

build/native/launch_driver: native/launch_driver/launch_driver.c native/launch.c native/common.c native/tc_launch.h native/threadcost.h
	@mkdir -p $(@D)
	cc -O2 -Wall -Wextra -Werror -pthread -Inative -static -o $@ $(filter %.c,$^) || \
	  cc -O2 -Wall -Wextra -Werror -pthread -Inative -o $@ $(filter %.c,$^)

# The Go peers of 05_user_space_tasks (the goroutine rows), built when `go` is on
# PATH; without Go a note says so and those rows read "not run" (peers.py also
# builds on demand). Offline: no toolchain download, no module proxy.
PEERS_SRC := $(wildcard native/peers/go/*.go) native/peers/go/go.mod
PEERS_BIN := build/peers/tcpeers
GO_ENV := GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off GOWORK=off CGO_ENABLED=0 \
          GOCACHE=$(CURDIR)/build/peers/gocache GOPATH=$(CURDIR)/build/peers/gopath

peers:
	@if command -v go >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory -q $(PEERS_BIN) || $(MAKE) --no-print-directory $(PEERS_BIN); \
	else \
	  echo "note: Go is not on PATH: skipping the Go peers; the goroutine rows of notebook 05 will read 'not run' (install Go, e.g. conda-forge go)"; \
	fi

$(PEERS_BIN): $(PEERS_SRC)
	@mkdir -p $(@D)
	cd native/peers/go && env $(GO_ENV) go build -trimpath -o $(CURDIR)/$@ .

setup: $(VENV)/.installed $(NATIVE_LIB) $(LAUNCH_TOOLS) peers

native: $(NATIVE_LIB) $(LAUNCH_TOOLS)

paper: setup
	$(BIN)/python -m threadcost.paper --params $(PARAMS) --out $(PAPER_DIR)

test: setup browser-deps
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check threadcost tests native

# The C kernels called directly by native/tests/test_<family>.c, built plain,
# with ASan+UBSan (LeakSanitizer on) and with TSan (SANITIZE_VALGRIND=1 adds
# valgrind); a sanitizer this machine cannot run is skipped with the reason printed.
# `make test` runs it too (tests/test_sanitizers.py).
sanitize:
	native/tests/run_sanitizers.sh

# notebooks/*.py are the notebooks (jupytext py:percent): JupyterLab opens them as
# notebooks by default and saves back to them, without outputs.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
$(LAB_SETTINGS): $(VENV)/.installed
	@mkdir -p $(@D)
	@echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}}}' > $@

lab: setup $(LAB_SETTINGS)
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf build $(PAPER_DIR) threadcost/_native*.so threadcost/_native.c $(NATIVE_LIB) \
	       .pytest_cache *.egg-info

# Debian's Chromium for the browser tests (tests/browser). A no-op when it is
# installed; without root or apt-get the browser tests skip, saying why.
browser-deps:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "browser-deps: installing chromium with apt-get"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "browser-deps: chromium could not be installed; browser tests will skip"; \
	else echo "browser-deps: no chromium and no apt-get as root; browser tests will skip"; fi

# Keep the last rendered paper as this machine kind's committed reference
# rendering: reference/<machine-id>/index.html (run `make paper` first).
# A reference is made from a committed tree: the paper must have been rendered from a
# clean checkout (html/_static/build.json), and the tree must still be that commit.
reference: setup
	@test -f $(PAPER_DIR)/html/index.html || { echo "reference: run 'make paper' first"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=no -- . ':(exclude)data' ':(exclude)figures' ':(exclude)reference')" || { \
	  echo "reference: the working tree has uncommitted changes; commit, then make paper again"; exit 1; }
	@$(BIN)/python -c 'import json,subprocess,sys; b=json.load(open("$(PAPER_DIR)/html/_static/build.json")); head=subprocess.run(["git","rev-parse","HEAD"],capture_output=True,text=True).stdout.strip(); sys.exit(0 if not b.get("dirty") and b.get("commit")==head else "reference: $(PAPER_DIR) was rendered from " + str(b.get("commit"))[:10] + (" with uncommitted changes" if b.get("dirty") else "") + ", not from the committed HEAD " + head[:10] + ": make paper again")'
	@mid=$$($(BIN)/python -c 'from threadcost import machine; print(machine.machine_id())') && \
	  rm -rf reference/$$mid && mkdir -p reference && cp -r $(PAPER_DIR)/html reference/$$mid && \
	  echo "reference rendering: reference/$$mid/index.html"
