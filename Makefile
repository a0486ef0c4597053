# popshim build, run and test entry points. `make run` and `make test` work on
# a fresh Debian/Ubuntu machine with Go and a C compiler: `deps` installs
# RocksDB (librocksdb-dev) and pkg-config; `make test`'s interop step also
# needs JDK 17, Maven and Maven Central, and for its gRPC part openssl,
# python3 with venv and Node.js with npm (the Python and Node v5 SDKs are
# installed from PyPI and npm into ~/.cache/popshim-v5 on first use).

GO        ?= go
BIN       := bin/popshim
DATA_DIR  ?= ./data
VERSION   := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
# Fuzz budget per target: FUZZTIME in `make test`, FUZZTIME_LONG in `make fuzz`.
# Budgets are execution counts (Nx), not durations: go1.26's fuzz coordinator
# can report a spurious "context deadline exceeded" when a duration budget ends
# while a worker is mid-call (golang/go#75804, fixed in go1.27). A count has no
# deadline to race, so a failure here always means a real crasher.
FUZZTIME      ?= 150000x
FUZZTIME_LONG ?= 5000000x
# grocksdb is cgo; the system librocksdb-dev (7.8.x) is found by default.
export CGO_ENABLED := 1
# golangci-lint for `make vet`, pinned; `tools` builds it from source with
# the Go toolchain into bin/tools/golangci-lint-<version>/ when that version
# is missing (about 2 minutes once), so a new pin installs itself and
# nothing pre-installed is used. Checks and exclusions: .golangci.yml.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(CURDIR)/bin/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: all build run test deps interop-deps tools vet unit fuzz-quick fuzz crash interop bench bench-anchor bench-memory bench-timers-long bench-tls bench-auth bench-grpc bench-cost bench-producer clean

all: build

## deps: install librocksdb-dev when its headers or pkg-config entry are missing.
deps:
	@if ! pkg-config --exists rocksdb 2>/dev/null || [ ! -f /usr/include/rocksdb/c.h ]; then \
		echo "installing librocksdb-dev"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y librocksdb-dev pkg-config; \
	fi
	@v=$$(pkg-config --modversion rocksdb 2>/dev/null); case "$$v" in \
		7.8.*) ;; \
		*) echo "warning: RocksDB $${v:-of unknown version} found; grocksdb v1.7.14 is built for 7.8 (Debian bookworm's librocksdb-dev 7.8.3) and may not compile against it" >&2 ;; \
	esac

## build: compile bin/popshim.
build: deps
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) .

## run: build and serve with data in ./data (Ctrl-C stops it gracefully).
## DATA_DIR=dir moves the data; SERVE_ARGS='--flag=value ...' adds serve flags.
run: build
	./$(BIN) serve --data-dir $(DATA_DIR) $(SERVE_ARGS)

## test: vet, race-enabled unit tests, a short run of every fuzz target, the
## kill -9 disk-full test, interop.
test: deps vet unit fuzz-quick
	$(MAKE) crash
	$(MAKE) interop

## tools: install the pinned golangci-lint into bin/tools if it is missing.
tools: $(GOLANGCI_LINT)

$(GOLANGCI_LINT):
	GOBIN=$(dir $@) CGO_ENABLED=0 $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

## vet: gofmt, go.mod tidiness, go vet, then golangci-lint (.golangci.yml).
vet: tools
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	@if ! $(GO) mod tidy -diff >/dev/null 2>&1; then echo "go.mod/go.sum are not tidy: run 'go mod tidy'"; $(GO) mod tidy -diff; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags crash ./testdata/crash/
	$(GOLANGCI_LINT) run ./...
	$(GOLANGCI_LINT) run --build-tags crash ./testdata/crash/

unit:
	$(GO) test -race -count=1 ./...

# Every `func FuzzX(` in a _test.go file is found by grep, so new targets run
# without editing this file. `go test -fuzz` takes one package and one target.
define run_fuzz
	@set -e; for f in $$(grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . | grep -v '/testdata/' | sort); do \
		dir=$$(dirname $$f); \
		for t in $$(grep -oE '^func Fuzz[A-Za-z0-9_]*' $$f | sed 's/^func //'); do \
			echo "fuzz $$dir $$t for $(1)"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime=$(1) $$dir; \
		done; \
	done
endef

fuzz-quick:
	$(call run_fuzz,$(FUZZTIME))

## fuzz: every fuzz target for FUZZTIME_LONG each.
fuzz:
	$(call run_fuzz,$(FUZZTIME_LONG))

## crash: SIGKILL of the built binary during a full-disk episode (64 MiB tmpfs)
## and after recovery; nothing acknowledged may be lost. Needs root to mount
## the tmpfs (skipped, saying so, otherwise); not in `unit`, which runs before
## the build.
crash: build
	POPSHIM_BIN=$(abspath $(BIN)) $(GO) test -tags crash -race -count=1 -v ./testdata/crash/

## interop-deps: install what the gRPC lane's Python and Node SDKs and its
## TLS certificate need when missing (python3 venv, npm, openssl).
interop-deps:
	@missing=""; \
	python3 -c 'import ensurepip, venv' 2>/dev/null || missing="$$missing python3-venv"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi

## interop: real RocketMQ clients (Java, Go, the v5 SDKs) against a fresh popshim.
interop: build interop-deps
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/interop/run.sh

## bench: group-commit vs sync-mode benchmark (scripts under testdata/bench).
bench: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/run.sh

## bench-tls: ACK throughput and latency over plaintext and TLS, interleaved, one popshim.
bench-tls: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/tls.sh

## bench-anchor: the reference (anchor) benchmark against Apache RocketMQ.
bench-anchor: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/anchor.sh

## bench-memory: popshim RSS idle, with 1 M outstanding checkpoints, with 10 k idle connections; peak RSS under 800 × 1 MiB SENDs and 5,000 slowly dripped 4 MiB frames.
bench-memory: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/memory.sh

## bench-grpc: v5 gRPC send and receive+ack: popshim's endpoint, rocketmq-proxy on popshim, rocketmq-proxy on RocketMQ 5.5.1; interleaved rounds.
bench-grpc: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/grpc.sh

## bench-timers-long: 1 M timers due over 30 days: disk, RSS, idle CPU, restart time, ACK/s beside them.
bench-timers-long: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/timers_long.sh

## bench-auth: the ACK workload with --auth-enabled (signed client) vs without, interleaved.
bench-auth: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/auth.sh

## bench-cost: server CPU per message and disk bytes per payload byte, popshim vs Apache RocketMQ, interleaved.
bench-cost: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/cost.sh

## bench-producer: server CPU per message under RocketMQ's own benchmark Producer, popshim vs Apache RocketMQ, interleaved.
bench-producer: build
	POPSHIM_BIN=$(abspath $(BIN)) bash testdata/bench/producer.sh

clean:
	rm -rf bin
