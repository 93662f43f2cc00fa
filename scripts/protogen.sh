#!/usr/bin/env bash
# protogen.sh regenerates the Go code for every .proto under proto/ with pinned
# generators: protoc from Debian's protobuf-compiler package (installed with
# apt-get when missing; needs root) and protoc-gen-go at the version of
# google.golang.org/protobuf in go.mod, installed into ./.bin.
#
# Usage: scripts/protogen.sh [--install-only]
#   --install-only  install protoc and protoc-gen-go, generate nothing (CI
#                   installs the tools before tests; the staleness test must
#                   compare against the committed code, not a fresh one)
#
# Environment (used by the staleness test, proto/.../generated_test.go):
#   PROTOGEN_OUT   write the generated tree under this directory instead of
#                  the repository (paths stay module-relative)
#   PROTOC_GEN_GO  use this protoc-gen-go binary instead of installing one
set -euo pipefail

install_only=false
case "${1:-}" in
--install-only) install_only=true ;;
"") ;;
*)
	echo "usage: $0 [--install-only]" >&2
	exit 2
	;;
esac

cd "$(dirname "$0")/.."
root=$PWD
module=github.com/streamsub/streamsub

if ! command -v protoc >/dev/null 2>&1; then
	if [ "$(id -u)" != 0 ]; then
		echo "protogen: protoc is missing; install Debian's protobuf-compiler (as root)" >&2
		exit 1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler >/dev/null
fi

plugin=${PROTOC_GEN_GO:-}
if [ -z "$plugin" ]; then
	version=$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
	plugin=$root/.bin/protoc-gen-go
	if [ ! -x "$plugin" ] || [ "$("$plugin" --version 2>/dev/null)" != "protoc-gen-go $version" ]; then
		GOBIN=$root/.bin go install "google.golang.org/protobuf/cmd/protoc-gen-go@$version"
	fi
fi

if $install_only; then
	echo "protogen: $(protoc --version), $("$plugin" --version) installed" >&2
	exit 0
fi

out=${PROTOGEN_OUT:-$root}
mkdir -p "$out"
mapfile -t files < <(cd proto && find . -name '*.proto' | sed 's|^\./||' | LC_ALL=C sort)
protoc --plugin=protoc-gen-go="$plugin" -I proto \
	--go_out="$out" --go_opt=module="$module" \
	"${files[@]}"
echo "protogen: $(protoc --version), $("$plugin" --version): ${#files[@]} file(s)" >&2
