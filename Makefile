# Weft — one Go module, one binary. `make run` and `make test` are the two
# commands of the README; both install what they need.

GO      ?= go
PYTHON  ?= python3
BIN     := bin/weft
VENV    := clients/python/.venv
PY      := $(VENV)/bin/python
GOFLAGS_TEST ?= -timeout 25m

.PHONY: all build run test test-go test-race test-invariants test-py lint vet fmt-check \
        bench bench-kronos bench-dql fuzz lin faults adya generate pydeps clean sim

all: build

build:
	$(GO) build -o $(BIN) ./cmd/weft

# The main job: a Kronos replica on 127.0.0.1:7400 with data in ./weft-data,
# then the three applications of the Kronos paper run against it.
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

$(PY):
	$(PYTHON) -m venv $(VENV)

pydeps: $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e 'clients/python[test]'

test-py: build pydeps
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
