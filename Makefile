# DMG — graph processing on disaggregated memory.
#
#   make demo   build, then run the main job on a built-in graph under mpirun
#   make test   install what is missing, then unit, race, fuzz and mpirun tests
#
# Both install their system dependencies (Open MPI, libfabric, Slurm) with apt-get
# when missing, as root or through sudo.

SHELL      := /bin/bash
GO         ?= go
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
BIN        := ./dmg
NP         ?= 4
ROLES      ?= cn:2,mn:2
FUZZTIME   ?= 2s
VERSION    ?= $(shell git describe --always --dirty --tags 2>/dev/null || echo devel)

# Open MPI refuses root and more ranks than cores unless told; keep it quiet
# and on loopback interfaces for a single machine. Users on clusters pass
# their own mpirun options; these only affect targets run from here.
export OMPI_MCA_rmaps_base_oversubscribe := 1
export OMPI_MCA_orte_execute_quiet := 1
ifeq ($(shell id -u),0)
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
endif
MPIRUN     ?= mpirun

# slurm-wlm and munge: the tests under a real Slurm on the test bed (scripts/testbed-slurm.sh);
# libpmix-dev: srun --mpi=pmix dlopens its unversioned libpmix.so.
APT_PKGS   := openmpi-bin libopenmpi-dev libfabric-dev libfabric-bin pkg-config gcc \
              slurm-wlm munge libpmix-dev
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test test-unit test-race test-fuzz test-integration demo bench bench-scale lint clean

all: build

## deps: install Open MPI, libfabric, Slurm and the Go modules (idempotent)
deps:
	@missing=""; for p in $(APT_PKGS); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi
	@command -v $(GO) >/dev/null || { echo "deps: Go 1.26 is needed (https://go.dev/dl)"; exit 1; }
	@$(GO) mod download

## build: the dmg binary
build: deps
	$(GO) build -ldflags "-X github.com/dmg-hpc/dmg/launch.Version=$(VERSION)" -o $(BIN) ./cmd/dmg

## test: everything CI runs
test: deps lint test-race test-fuzz test-integration

## test-race: unit tests under the race detector (mpirun tests skipped here: -short)
test-race:
	$(GO) test -short -race -count=1 ./...

## test-fuzz: every fuzz target for $(FUZZTIME)
test-fuzz:
	@./scripts/fuzz.sh $(FUZZTIME)

## test-integration: the whole suite, including real mpirun launches over libfabric
test-integration:
	$(GO) test -count=1 -timeout 30m ./...

## demo: the main job on a built-in default graph
demo: build
	$(MPIRUN) -np $(NP) $(BIN) --roles $(ROLES) info
	$(MPIRUN) -np $(NP) $(BIN) --roles $(ROLES) run --algo pagerank --graph kron:16 --verify

## bench: Go benchmarks briefly, then a small suite of runs under mpirun:
## summary table, results.csv/json and PNG plots in bench-results/ (minutes)
bench: BENCHTIME ?= 200ms
bench: BENCH_GRAPHS ?= kron:14
bench: BENCH_LAYOUTS ?= cn:1,mn:1,cn:2,mn:2
bench: BENCH_REPS ?= 3
bench: BENCH_ITERATIONS ?= 5
bench: BENCH_OUT ?= bench-results
bench: build
	$(GO) test -run='^$$' -bench=. -benchtime=$(BENCHTIME) -benchmem \
		$$(grep -rl --include='*_test.go' '^func Benchmark' . | xargs -rn1 dirname | sort -u)
	$(BIN) bench suite --graphs $(BENCH_GRAPHS) --layouts $(BENCH_LAYOUTS) --reps $(BENCH_REPS) --iterations $(BENCH_ITERATIONS) \
		--mpirun '$(MPIRUN)' --timeout 3m --out-dir $(BENCH_OUT)

## bench-scale: the load and compute of kron:20, 22 and 24 (SCALE_GRAPHS) under
## mpirun with cn:2,mn:2: load and compute time, CN and MN peak RSS and DM
## bytes per edge against |E|, one line per kernel (scale_*.png in
## bench-scale/; about 15 minutes on two cores; SCALE_GRAPHS=...,kron:26
## adds a billion edges, about 20 minutes a kernel on 24 GiB)
bench-scale: SCALE_GRAPHS ?= kron:20,kron:22,kron:24
bench-scale: SCALE_ALGOS ?= pagerank,bfs,wcc,sssp
bench-scale: SCALE_OUT ?= bench-scale
bench-scale: build
	$(BIN) bench suite --graphs $(SCALE_GRAPHS) --algos $(SCALE_ALGOS) --layouts $(ROLES) --reps 1 --iterations 5 \
		--variants dmg= --baseline dmg --mpirun '$(MPIRUN)' --timeout 60m --out-dir $(SCALE_OUT)

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -f $(BIN)
	$(GO) clean -testcache
