# Weft — one Go module, one binary. `make run` and `make test` are the two
# commands of the README; both install what they need.

GO      ?= go
PYTHON  ?= python3
BIN     := bin/weft
VENV    := clients/python/.venv
PY      := $(VENV)/bin/python
GOFLAGS_TEST ?= -timeout 25m
# `make install` copies bin/weft to $(PREFIX)/bin: ~/.local/bin by default
# (no root needed; on PATH in most login shells), e.g. PREFIX=/usr/local.
PREFIX  ?= $(HOME)/.local

.PHONY: all build install run test test-go test-race test-invariants test-py lint vet fmt-check \
        bench bench-kronos bench-dql console fuzz lin faults adya generate pydeps pydeps-test clean sim

all: build

# `weft version` names the commit: Go stamps vcs.revision itself in a plain
# checkout; these link-time values stand in where it cannot (a git worktree,
# -buildvcs=false in GOFLAGS). Without git they are empty.
GIT_DESCRIBE := $(shell git describe --always --dirty 2>/dev/null)
GIT_REVISION := $(shell git rev-parse HEAD 2>/dev/null)
GIT_TIME     := $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS      := $(if $(GIT_REVISION),-X main.version=$(GIT_DESCRIBE) -X main.vcsRevision=$(GIT_REVISION) \
                -X main.vcsTime=$(GIT_TIME) -X main.vcsModified=$(if $(findstring -dirty,$(GIT_DESCRIBE)),true,false))

# go build is incremental; the note is printed only when bin/weft is missing
# or older than a Go source, go.mod or go.sum (bin/weft is touched after each
# build, as go build leaves an up-to-date binary alone).
build:
	@if [ ! -x $(BIN) ] || [ -n "$$(find . -path ./clients -prune -o -path ./weft-data -prune -o \
	    \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -newer $(BIN) -print -quit)" ]; then \
	  echo "building $(BIN): the first build downloads the Go modules and compiles Weft (~170k lines) and ~670"; \
	  echo "packages it uses, 5-15 min on 2 cores; later builds take seconds (go build -o $(BIN) ./cmd/weft)..."; \
	fi
	@$(GO) build -buildvcs=auto -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/weft && touch $(BIN)

install: build
	@mkdir -p $(PREFIX)/bin && cp $(BIN) $(PREFIX)/bin/weft.tmp && mv $(PREFIX)/bin/weft.tmp $(PREFIX)/bin/weft
	@echo "installed $(PREFIX)/bin/weft ($$($(PREFIX)/bin/weft version))"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) echo "$(PREFIX)/bin is on PATH: run weft";; \
	  *) echo "$(PREFIX)/bin is NOT on PATH: add it (export PATH=\"$(PREFIX)/bin:\$$PATH\") or run $(PREFIX)/bin/weft";; esac

# The main job: the embedded graph server (`weft serve --demo`: gatekeepers,
# shards, Kronos and the Pebble store in one process; HTTP 127.0.0.1:7580,
# gRPC 127.0.0.1:7500, data in ./weft-data/serve) with the demo graph (loaded
# once, on the first run; kept across runs), a short re-runnable tour through
# the CLI, HTTP and Python, then serving until Ctrl-C (scripts/run-demo.sh).
run: build pydeps
	./scripts/run-demo.sh

test: lint test-go test-race test-invariants test-py

lint: fmt-check vet

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test-go:
	$(GO) test $(GOFLAGS_TEST) ./...

test-race:
	$(GO) test -race $(GOFLAGS_TEST) ./...

# Every package's self-checks on (internal/invariants: On is true under the tag).
test-invariants:
	$(GO) test -tags invariants $(GOFLAGS_TEST) ./internal/...

# The web console (docs/console.md): rebuild internal/api/console/dist from
# web/console with npm (node 20); commit the result. TestDistUpToDate
# fails when the committed dist is stale.
console:
	cd web/console && npm ci --no-audit --no-fund && npm run build

$(PY):
	$(PYTHON) -m venv $(VENV)

# pip runs only when clients/python/pyproject.toml changed since the last
# install of the same kind (a stamp in the venv named by its hash): pydeps
# installs what the demo needs (the client, no extras), pydeps-test adds the
# test extras.
PYPROJECT_HASH = $(shell sha256sum clients/python/pyproject.toml | cut -c1-16)

pydeps: $(PY)
	@stamp=$(VENV)/.weft-pydeps-demo-$(PYPROJECT_HASH); [ -e $$stamp ] || { \
	  echo "installing the Python client into $(VENV) (pip, about a minute)..."; \
	  $(PY) -m pip install --quiet --upgrade pip && \
	  $(PY) -m pip install --quiet -e clients/python && \
	  rm -f $(VENV)/.weft-pydeps-demo-* && touch $$stamp; }

pydeps-test: $(PY)
	@stamp=$(VENV)/.weft-pydeps-test-$(PYPROJECT_HASH); [ -e $$stamp ] || { \
	  echo "installing the Python client with its test extras into $(VENV) (pip)..."; \
	  $(PY) -m pip install --quiet --upgrade pip && \
	  $(PY) -m pip install --quiet -e 'clients/python[test]' && \
	  rm -f $(VENV)/.weft-pydeps-test-* && touch $$stamp; }

test-py: build pydeps-test
	cd clients/python && WEFT_BIN=$(CURDIR)/$(BIN) .venv/bin/python -m pytest -q

bench: bench-kronos

bench-kronos: build
	./$(BIN) bench kronos

bench-dql: build
	./$(BIN) bench dql

# Scale-out grid (docs/scale-out.md): local clusters of 1, 2, 4 gatekeepers
# × 1, 2, 4, 8 shards, TAO and get_node mixes, CPU per role and the model.
# Extra flags: SCALE_FLAGS, e.g. SCALE_FLAGS='--quick' or '--shards 2,4'.
SCALE_FLAGS ?=
.PHONY: bench-scale
bench-scale: build
	./$(BIN) bench scale $(SCALE_FLAGS)

# Longer linearizability run of the replicated service under kill -9.
lin: build
	WEFT_LIN_DURATION=120s $(GO) test ./internal/kronos/ -run Lineariz -v -timeout 30m

# The real-process fault test (docs/testing.md): DURATION of mixed workloads
# against `weft serve` under kill -9, SIGSTOP/SIGCONT, partitions and clogs;
# histories, logs and report.txt in FAULTS_OUT. Extra flags: FAULTS_FLAGS,
# e.g. FAULTS_FLAGS='--seed 42 --nemesis kill,partition'.
DURATION     ?= 10m
FAULTS_OUT   ?= weft-data/faults
FAULTS_FLAGS ?=
CARGO        ?= $(shell command -v cargo || echo $$HOME/.cargo/bin/cargo)

faults: build
	-@$(MAKE) --no-print-directory adya
	./$(BIN) faults --duration $(DURATION) --out $(FAULTS_OUT) $(FAULTS_FLAGS)

# adya, the independent list-append/rw-register checker the fault test
# cross-checks with; `weft faults` reports "not available" without it.
adya:
	@command -v adya >/dev/null || test -x $$HOME/.cargo/bin/adya || \
		timeout 900 $(CARGO) install adya --no-default-features

# Every fuzz target for FUZZTIME each: make fuzz FUZZTIME=5m.
FUZZTIME ?= 30s
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

generate:
	./scripts/generate.sh

clean:
	rm -rf bin weft-data

# More simulation seeds than CI's 200: make sim SEEDS=5000 OPS=3000.
SEEDS ?= 2000
OPS   ?= 2500
sim:
	bash -o pipefail -c "$(GO) test ./internal/sim -run TestSimulation -count=1 -timeout 0 -v -sim.seeds=$(SEEDS) -sim.ops=$(OPS) | grep -v -e '^=== ' -e '--- PASS'"

# The docs' examples (docs/testing.md, "Doc tests"): every block marked
# `sh doctest` or `python doctest` run against a fresh `weft serve --demo`,
# the count per file printed, and the planted failures; DOC=api.md runs only
# the files matching. Then: docs/programs-reference.md is the generator's.
DOC ?=
.PHONY: doctest
doctest:
	bash -o pipefail -c "$(GO) test -count=1 -run 'TestDocs$$|Planted' -v ./internal/doctest -doc '$(DOC)' | grep -E 'run .* passed|^(--- |ok|FAIL)'"
	$(GO) test -count=1 ./internal/doctest/progref
