# threadcost: `make paper` runs the study, `make test` checks it.
# Each target bootstraps what it needs (.venv, compiled kernels) on a fresh clone.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PARAMS ?= params/default.yaml
# Where `make paper` writes the executed notebooks and the rendered HTML.
PAPER_DIR ?= build/paper
NATIVE_SRC := $(wildcard native/*.c native/*.h) native/build_native.py threadcost/cbuild.py
NATIVE_LIB := threadcost/.native.stamp

.PHONY: help setup native kernels params paper paper-from-data gallery test test-busy test-folders lab clean lint sanitize peers published \
        browser-deps reference lock environments dist vendor cross-arm64 debian13-check outputs-check

help:
	@echo "make paper    run every notebook (params: $(PARAMS)) -> runs/, build/figures/, $(PAPER_DIR)/"
	@echo "make paper-from-data MACHINE=<id>"
	@echo "              render data/<id>/ as a paper without measuring -> build/paper-<id>/"
	@echo "make gallery  every machine folder of data/ on one page, nothing measured -> build/gallery/"
	@echo "make test     the test suite (notebooks with params/quick.yaml), on 2 pytest-xdist workers"
	@echo "make test-busy  the same with one core kept busy by a busy loop"
	@echo "make test-folders  every machine folder under data/ rendered afresh, its numbers checked"
	@echo "make lab      JupyterLab on the notebooks"
	@echo "make setup    .venv with the locked dependencies, test tools included, + compiled C kernels"
	@echo "make sanitize C kernels under ASan+UBSan (and TSan)"
	@echo "make cross-arm64  every C program built for arm64 (warnings as errors), C tests under qemu-user"
	@echo "make debian13-check  make paper and make test in a fresh Debian 13 root (debootstrap)"
	@echo "make outputs-check BASE=<commit>  every page's visible text and the claims' JSON on the"
	@echo "              stored runs, at BASE and here, compared (DATA=<folder>: that folder's too)"
	@echo "make published  data/published/{claims,values,quotes}.csv from the claims' records"
	@echo "make params   params/default.yaml and the notebooks' parameters cells from the families' specs (threadcost/experiments/<family>/spec.py)"
	@echo "make lock     recompile the lock (requirements/*.txt) from pyproject.toml"
	@echo "make dist     build the sdist and the wheel into dist/"
	@echo "make clean    remove build outputs (never data/)"
	@echo "make vendor   refresh vendor/vega from npm (pinned versions; rewrites vendor/SHA256SUMS)"

# Dependencies: pyproject.toml lists compatible ranges; requirements/*.txt lock the
# exact tested set (`make lock`). `make paper` and `make lab` install the
# runtime + [notebooks] lock only; `make test` adds [test] and [browser].
LOCK_PAPER := requirements/paper.txt
LOCK_TEST  := requirements/test.txt

# The oldest Python the lock resolves for (a locked dependency needs 3.11.5; the lock is
# compiled for it, UV_COMPILE below, and pyproject.toml's requires-python says the same).
PYTHON_MIN := 3.11.5

# Each step of the setup is one line when it fails, with the README's exit codes: 2 for
# bad input (PYTHON names no usable Python), 4 for what the system lacks (a Python too
# old, its venv module, a C compiler, the network, disk space); tools/setup_step.sh keeps
# a step's output in build/setup.log. (make itself then exits 2 and names the code in
# its last line: "Error 4".)
SETUP_STEP := sh tools/setup_step.sh
$(VENV)/.created:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "setup: PYTHON=$(PYTHON) is not a command here: threadcost needs Python $(PYTHON_MIN) or later (set PYTHON=/path/to/python3)" >&2; exit 2; }
	@$(PYTHON) -c 'import sys; need = tuple(map(int, "$(PYTHON_MIN)".split("."))); v = sys.version_info[:3]; ok = v >= need; ok or print("setup: threadcost needs Python $(PYTHON_MIN) or later; $(PYTHON) is %d.%d.%d (install a newer one and set PYTHON=/path/to/it)" % v, file=sys.stderr); sys.exit(0 if ok else 4)'
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { echo "setup: $(PYTHON) has no venv module (Debian, Ubuntu: apt-get install python3-venv)" >&2; exit 4; }
	@command -v cc >/dev/null || { echo "setup: no C compiler (cc) on PATH (Debian, Ubuntu: apt-get install build-essential; Fedora: dnf install gcc make)" >&2; exit 4; }
	@$(SETUP_STEP) "creating $(VENV)" $(PYTHON) -m venv $(VENV)
	@$(SETUP_STEP) "installing uv into $(VENV)" $(BIN)/python -m pip install --quiet --disable-pip-version-check 'uv>=0.13,<0.14'
	@touch $@

# Python caches the bytecode of what it imports (.venv, threadcost/, tests/), also where
# the caller's environment sets PYTHONDONTWRITEBYTECODE: else every test process and
# notebook kernel compiles each module it imports again (the suite took 470 s, not 294 s).
# Only what is imported is compiled, once, by the first process that imports it.
unexport PYTHONDONTWRITEBYTECODE

# The locked sets are installed by uv (the same pins pip would install, in a fraction of
# the time), exactly as locked (--no-deps: the lock is complete), and so is threadcost
# itself (editable; its build compiles the kernels in place).
UV_INSTALL = $(BIN)/uv pip install --quiet --no-deps --python $(BIN)/python

# The study's environment: the locked runtime + notebooks set, then threadcost.
$(VENV)/.installed-paper: $(VENV)/.created $(LOCK_PAPER) pyproject.toml setup.py
	@$(SETUP_STEP) "installing the locked packages ($(LOCK_PAPER))" $(UV_INSTALL) -r $(LOCK_PAPER)
	@$(SETUP_STEP) "installing threadcost and compiling its C kernels" $(UV_INSTALL) -e .
	@touch $@

# The test environment: the above plus the locked test and browser tools.
$(VENV)/.installed-test: $(VENV)/.installed-paper $(LOCK_TEST)
	@$(SETUP_STEP) "installing the locked test tools ($(LOCK_TEST))" $(UV_INSTALL) -r $(LOCK_TEST)
	@touch $@

# Recompile the lock after editing pyproject.toml's lists. uv keeps every pin
# already in the lock that still fits (so the tested versions stay); pass
# UPGRADE=1 to move to the newest versions the ranges allow. paper.txt is
# compiled within test.txt, so the two never disagree on a version. The lock is
# universal (any OS, Python 3.11.5 and later: a locked dependency needs 3.11.5).
UV_COMPILE = $(BIN)/uv pip compile pyproject.toml --universal --python-version $(PYTHON_MIN) --quiet \
             $(NOT_LOCKED) $(if $(UPGRADE),--upgrade)
# Left out of the lock: jsonschema's optional IRI format checker, which jupyter-events asks
# for (jsonschema[format-nongpl]), and its parser. It compiles a grammar when jsonschema is
# imported: about 1 s of CPU in every process that imports nbformat, nbconvert, papermill or
# Altair (each kernel, each build), for a format check nothing here uses. Without it,
# jsonschema leaves that one format unchecked.
NOT_LOCKED = --no-emit-package rfc3987-syntax --no-emit-package lark
lock: $(VENV)/.created
	$(UV_COMPILE) --extra notebooks --extra test --extra browser -o $(LOCK_TEST)
	$(UV_COMPILE) --extra notebooks -c $(LOCK_TEST) -o $(LOCK_PAPER)
	$(MAKE) --no-print-directory environments

# environment.yml and binder/environment.yml: conda-forge's Python and compiler
# plus the pip lock of the study (tests/test_repository.py checks they match).
environments:
	$(PYTHON) tools/environments.py

# Rebuild the kernels in place whenever a C source or header changes (not again right
# after the editable install built them).
$(NATIVE_LIB): $(VENV)/.installed-paper $(NATIVE_SRC)
	@$(BIN)/python native/build_native.py --if-stale >/dev/null
	@touch $@

# Small static helpers of 03_launch, built from native/ subfolders (outside the
# extension's native/*.c glob): the program posix_spawn starts, and the small
# clean process launches are timed from (launch.py also builds them if missing). Both
# are compiled by threadcost.cbuild, with the flags of every build on a reader's machine
# (warnings shown, never errors), statically where libc.a exists.
LAUNCH_TOOLS := build/native/spawn_target build/native/launch_driver
CBUILD = $(BIN)/python -m threadcost.cbuild --static

build/native/spawn_target: native/spawn_target/spawn_target.c threadcost/cbuild.py | $(VENV)/.installed-paper
	@$(CBUILD) -o $@ $(filter %.c,$^)

build/native/launch_driver: native/launch_driver/launch_driver.c native/launch.c native/common.c native/tc_launch.h native/threadcost.h threadcost/cbuild.py | $(VENV)/.installed-paper
	@$(CBUILD) -Inative -o $@ $(filter %.c,$^)

# The peers of notebooks 05 and 07 (native/peers/<language>), built into
# build/peers/<language>/ by the peer registry (threadcost/peers), once, and
# again when a source changes: Go (offline: no toolchain download, no module
# proxy), Rust (cargo fetch --locked once from crates.io, then build --locked
# --offline) and Java (javac, JDK 21 or later). A language without its
# toolchain gets a note, and its rows read "not run here". A build is kept in
# ~/.cache/threadcost/peers (keyed by its sources and toolchain): another clone copies
# it instead of building (THREADCOST_PEER_CACHE=off builds every time).
peers: $(VENV)/.installed-paper
	@$(BIN)/python -m threadcost.peers

# The compiled kernels, the launch helpers and (with Go) the peers.
kernels: $(NATIVE_LIB) $(LAUNCH_TOOLS) peers

# A developer's setup: the test environment and the kernels.
setup: $(VENV)/.installed-test kernels

native: $(NATIVE_LIB) $(LAUNCH_TOOLS)

paper: $(VENV)/.installed-paper kernels
	$(BIN)/python -m threadcost.paper --params $(PARAMS) --out $(PAPER_DIR)

# The paper of any machine folder under data/ (yours, the committed ones, one a user
# contributed), drawn from its stored runs without measuring anything, so without the
# compiled kernels (drawing never calls one: threadcost.native opens them at a kernel's
# first call):
#   make paper-from-data MACHINE=x86_64-intel-xeon-2cpu-24g-kvm-a0232525
paper-from-data: $(VENV)/.installed-paper
	@test -n "$(MACHINE)" || { echo "paper-from-data: name a machine folder, MACHINE=<id>" \
	  "(under data/: $$(ls data | grep -v '^published$$' | tr '\n' ' '))"; exit 2; }
	$(BIN)/python -m threadcost.paper --machine $(MACHINE) --params $(PARAMS) \
	  --out build/paper-$(MACHINE)

# Every machine folder under data/ on one static page (card, headline numbers, a verdict
# per claim; sorting and filtering in the browser), drawn from the stored runs without
# measuring; each machine links to its paper where one is rendered (reference/<id>/ or
# build/paper-<id>/: make paper-from-data first). DATA=<folder> shows another data folder.
gallery: $(VENV)/.installed-paper
	$(BIN)/threadcost gallery $(if $(DATA),--data-dir $(DATA)) --out build/gallery

# The suite on TEST_WORKERS pytest-xdist workers (2: the cores of the reference
# machine). Every notebook is executed once per session: one quick rendering, built in
# the background while the other tests run, read by every test that needs it
# (tests/conftest.py). Each worker takes the next test when it is done (the long ones
# are collected first, the readers of the quick rendering last): loadgroup hands out
# the tests in that order, a few at a time. (Its xdist_group marks do not group under
# pytest 9, so no test relies on them.)
TEST_WORKERS ?= 2
PYTEST_XDIST = -n $(TEST_WORKERS) --dist loadgroup
test: setup browser-deps $(VENV)/.prewarmed
	$(BIN)/python -m pytest $(PYTEST_XDIST)

# A fresh .venv holds no bytecode (uv installs without it), and the suite starts several
# Python processes at once (the workers, the quick rendering's build and kernels, the
# lanes' builds): each would compile the same modules. tests/prewarm.py compiles them
# first, in two processes side by side, once per .venv.
$(VENV)/.prewarmed: $(VENV)/.installed-test
	@$(BIN)/python -m tests.prewarm
	@touch $@

# The same suite with one core kept busy by another job (a plain busy loop), as on a
# shared machine: it must stay green, and each test within its bounds.
test-busy: setup browser-deps $(VENV)/.prewarmed
	@$(PYTHON) -c 'while True: pass' & busy=$$!; \
	  trap 'kill $$busy 2>/dev/null' EXIT INT TERM; \
	  echo "test-busy: a busy loop (pid $$busy) keeps one core busy"; \
	  $(BIN)/python -m pytest $(PYTEST_XDIST)

# Every machine folder under data/ rendered afresh and its printed numbers checked (one
# value per finding's name): about 90 s of CPU per folder, so on demand, not in `make test`.
test-folders: setup
	$(BIN)/python -m pytest $(PYTEST_XDIST) -m folders tests/test_named_numbers.py

# What a user sees of the stored runs (every page's visible text, `threadcost claims --json`
# per folder and --all-machines) at BASE and in this checkout, compared: a refactoring
# leaves them identical (tools/outputs_snapshot.py). DATA=<folder> compares that data
# folder's machines too. About 80 s of CPU per folder and checkout.
BASE ?= HEAD
outputs-check: $(VENV)/.installed-paper
	@rm -rf build/outputs && mkdir -p build/outputs
	@git worktree add --detach build/outputs/base-tree $(BASE) >/dev/null
	@for data in data $(DATA); do name=$$(basename $$data); \
	  $(BIN)/python tools/outputs_snapshot.py take build/outputs/base/$$name --tree build/outputs/base-tree --data $$data && \
	  $(BIN)/python tools/outputs_snapshot.py take build/outputs/this/$$name --data $$data || exit 1; done; \
	  git worktree remove --force build/outputs/base-tree; \
	  $(BIN)/python tools/outputs_snapshot.py compare build/outputs/base build/outputs/this $(if $(CODE_MOVED),--code-moved)

# Generated from the parameter declarations (the families' specs (threadcost/experiments/<family>/spec.py)); a test fails on drift.
params: $(VENV)/.installed-paper
	$(BIN)/python tools/parameters_cells.py

lint: setup
	$(BIN)/ruff check threadcost tests native notebooks tools
	$(BIN)/vulture

# The published tables are written from the claims' records (threadcost/claims/records/);
# tests/test_claims_declared_once.py fails while they are stale.
published: $(VENV)/.installed-paper
	$(BIN)/python -m threadcost.claims.publish

# The C kernels called directly by native/tests/test_<family>.c, built plain,
# with ASan+UBSan (LeakSanitizer on) and with TSan (SANITIZE_VALGRIND=1 adds
# valgrind); a sanitizer this machine cannot run is skipped with the reason printed.
# `make test` runs it too (tests/test_sanitizers.py).
sanitize:
	native/tests/run_sanitizers.sh

# arm64 as far as this machine allows: every C program compiled with Debian's aarch64
# cross compiler, -Werror under Ubuntu's arm64 defaults, and the C tests run under
# qemu-user (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static).
cross-arm64:
	@$(PYTHON) tools/cross_arm64.py

# A reader's fresh Debian 13 (CONTRIBUTING.md, "A reader's machine"): as root, a debootstrap
# root with python3, python3-venv, build-essential and git; the committed HEAD cloned
# into it; make paper (PARAMS, default quick) and make test (TESTS=... for a subset) timed.
debian13-check:
	tools/debootstrap_check.sh

# notebooks/*.py are the notebooks (jupytext py:percent): JupyterLab opens them as
# notebooks on a double click (tools/jupyterlab-overrides.json: Python files open with
# jupytext's "Jupytext Notebook" viewer) and saves back to them, without outputs. The
# browser suite starts its JupyterLab with the same file (tests/browser/test_lab_notebooks.py).
# Kernels listen on Unix sockets in JupyterLab's private runtime folder, not on TCP.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
$(LAB_SETTINGS): tools/jupyterlab-overrides.json $(VENV)/.installed-paper
	@mkdir -p $(@D)
	@cp tools/jupyterlab-overrides.json $@

lab: $(VENV)/.installed-paper kernels $(LAB_SETTINGS)
	THREADCOST_INTERACTIVE=1 $(BIN)/jupyter lab notebooks --KernelManager.transport=ipc

# The sdist, and the wheel built from it (so a file the sdist lacks fails here).
dist: $(VENV)/.created
	rm -rf dist
	$(BIN)/python -m pip install --quiet 'build>=1.6,<2'
	$(BIN)/python -m build --outdir dist .

clean:
	rm -rf build dist $(PAPER_DIR) threadcost/_native*.so threadcost/_native.c threadcost/_native.py \
	       threadcost/_kernels*.so $(NATIVE_LIB) \
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
# rendering: reference/<machine-id>/index.html (run `make paper` first). The only
# target that writes tracked outputs: the runs that paper stored move from runs/
# (yours, git-ignored) into data/<machine-id>/ (threadcost.store.reference), the pages are
# drawn from there, and their figures replace figures/.
# A reference is made from a committed tree: the paper must have been rendered from a
# clean checkout (html/_static/build.json), and the tree must still be that commit.
# The pages are drawn again from the runs that paper stored (no measuring) and hold no
# copy: they link to data/, the code and vendor/ by relative path, so they read offline
# from any clone.
reference: $(VENV)/.installed-paper $(NATIVE_LIB)
	@test -f $(PAPER_DIR)/html/index.html || { echo "reference: run 'make paper' first"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=no -- . ':(exclude)data' ':(exclude)figures' ':(exclude)reference')" || { \
	  echo "reference: the working tree has uncommitted changes; commit, then make paper again"; exit 1; }
	@$(BIN)/python -c 'import json,subprocess,sys; b=json.load(open("$(PAPER_DIR)/html/_static/build.json")); head=subprocess.run(["git","rev-parse","HEAD"],capture_output=True,text=True).stdout.strip(); sys.exit(0 if not b.get("dirty") and b.get("commit")==head else "reference: $(PAPER_DIR) was rendered from " + str(b.get("commit"))[:10] + (" with uncommitted changes" if b.get("dirty") else "") + ", not from the committed HEAD " + head[:10] + ": make paper again")'
	@mid=$$($(BIN)/python -c 'from threadcost.host import machine; print(machine.machine_id())') && \
	  $(BIN)/python -m threadcost.store.reference $(PAPER_DIR) && \
	  mkdir -p reference && \
	  THREADCOST_DATA_DIR=data $(BIN)/python -m threadcost.paper --machine $$mid --params $(PARAMS) \
	    --out build/reference --html reference/$$mid --link-repo && \
	  cp build/reference/figures/*.svg build/reference/figures/*.png figures/ && \
	  echo "reference rendering: reference/$$mid/index.html (runs: data/$$mid/, figures: figures/)"

# The Vega bundles of the paper's charts (vendor/vega/), from npm at the versions
# Altair expects (threadcost/views/vega_assets.py pins the same ones; tests check the
# files against vendor/SHA256SUMS). Run by a maintainer to refresh; needs npm.
VEGA_PKGS := vega@6.4.0 vega-lite@6.4.1 vega-embed@7.3.0
vendor:
	@command -v npm >/dev/null || { echo "vendor: needs npm (apt-get install npm)"; exit 1; }
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; mkdir -p vendor/vega; \
	for spec in $(VEGA_PKGS); do \
	  name=$${spec%@*}; ver=$${spec##*@}; \
	  (cd "$$tmp" && npm pack --silent "$$spec" >/dev/null && mkdir -p "$$name" && \
	   tar xzf "$$name-$$ver.tgz" -C "$$name" package/build/$$name.min.js package/LICENSE); \
	  cp "$$tmp/$$name/package/build/$$name.min.js" vendor/vega/; \
	  cp "$$tmp/$$name/package/LICENSE" vendor/vega/LICENSE-$$name; \
	  echo "vendor: $$spec -> vendor/vega/$$name.min.js"; \
	done; \
	(cd vendor && find vega requirejs -type f | LC_ALL=C sort | xargs sha256sum) > vendor/SHA256SUMS; \
	echo "vendor: wrote vendor/SHA256SUMS"
