#!/usr/bin/env bash
# demo.sh starts the demo on loopback: demo origin (127.0.0.1:8080),
# `streamsub serve` (gRPC 127.0.0.1:50051, admin 127.0.0.1:9090) with
# examples/streamsub.yaml, and Envoy (127.0.0.1:10000, admin 127.0.0.1:9901)
# with envoy/envoy-local.yaml. Ctrl-C (or SIGTERM) stops everything.
#
# Environment: STREAMSUB_BIN (default bin/streamsub), ENVOY_BIN (default:
# envoy on PATH, else .venv/bin/envoy), STREAMSUB_CONFIG (default
# examples/streamsub.yaml), DEMO_LOGS (log directory, default a new temp dir).
# Each process's log is DEMO_LOGS/NAME.log and its pid DEMO_LOGS/NAME.pid
# (NAME: origin, streamsub, envoy).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${STREAMSUB_BIN:-$ROOT/bin/streamsub}
ENVOY=${ENVOY_BIN:-$(command -v envoy 2>/dev/null || echo "$ROOT/.venv/bin/envoy")}
CONFIG=${STREAMSUB_CONFIG:-$ROOT/examples/streamsub.yaml}
ENVOY_CONFIG=$ROOT/envoy/envoy-local.yaml
LOGS=${DEMO_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/streamsub-demo.XXXXXX")}
mkdir -p "$LOGS"

die() { echo "demo: $*" >&2; exit 1; }
[[ -x $BIN ]] || die "$BIN not found: run make build"
[[ -x $ENVOY ]] || die "Envoy not found (ENVOY_BIN, PATH, .venv/bin/envoy): run make envoy"
command -v curl >/dev/null || die "curl is needed"
for port in 8080 50051 9090 10000 9901; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "127.0.0.1:$port is already in use (another demo running?)"
	fi
done

pids=()
names=()
cleanup() {
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	echo "demo: stopped; logs in $LOGS" >&2
}
trap cleanup EXIT
# Ctrl-C and SIGTERM are the normal way to stop the demo: exit 0 after cleanup.
trap 'exit 0' INT TERM

start() { # start NAME CMD...: run in the background, output to $LOGS/NAME.log
	local name=$1
	shift
	"$@" >"$LOGS/$name.log" 2>&1 &
	echo "$!" >"$LOGS/$name.pid"
	pids+=("$!")
	names+=("$name")
}

wait_ready() { # wait_ready NAME URL
	for _ in $(seq 1 200); do
		curl -fsS -o /dev/null "$2" 2>/dev/null && return 0
		for i in "${!pids[@]}"; do
			kill -0 "${pids[$i]}" 2>/dev/null || { tail -20 "$LOGS/${names[$i]}.log" >&2; die "${names[$i]} exited"; }
		done
		sleep 0.1
	done
	die "$1 not ready at $2 after 20s (logs in $LOGS)"
}

start origin "$BIN" demo-origin -listen 127.0.0.1:8080
start streamsub "$BIN" serve -config "$CONFIG" -listen 127.0.0.1:50051 -admin 127.0.0.1:9090
wait_ready origin http://127.0.0.1:8080/empty
wait_ready streamsub http://127.0.0.1:9090/healthz
start envoy "$ENVOY" -c "$ENVOY_CONFIG" --disable-hot-restart --concurrency 2
wait_ready envoy http://127.0.0.1:9901/ready

cat <<MSG
streamsub demo is up (logs in $LOGS):
  curl -s http://127.0.0.1:10000/                                  # rewritten (rule set "standard")
  curl -s http://127.0.0.1:10000/bypass/                           # same page, ext_proc disabled
  curl -s -H 'Host: partner.example.test' http://127.0.0.1:10000/  # rule set "partner" (hosts map)
  curl -s -H 'Host: beta.example.test' http://127.0.0.1:10000/     # rule set "beta" (Envoy metadata)
  curl -s --compressed -i http://127.0.0.1:10000/                  # gzip by Envoy after the rewrite
  curl -s http://127.0.0.1:10000/gzip-always                       # origin gzips unasked: decoded, rewritten
  curl -s --compressed -H 'accept-encoding: br' http://127.0.0.1:10000/br-always  # brotli both ways
  curl -s -H 'X-Internal-User: bob' http://127.0.0.1:10000/headers # internal headers stripped
  curl -si http://127.0.0.1:10000/redirect                         # location, set-cookie, link, CSP rewritten
  curl -s -H 'referer: https://clone.example.net/a' http://127.0.0.1:10000/headers  # referer mapped back
  curl -s http://127.0.0.1:10000/split                             # matches cut across origin flushes
  curl -s 'http://127.0.0.1:10000/big?size=1000000' | tail -c 300  # large streamed body
  curl -s http://127.0.0.1:9090/metrics | grep streamsub_          # streamsub metrics
Ctrl-C stops everything.
MSG

# Run until interrupted or until one of the processes dies.
set +e
wait -n "${pids[@]}"
for i in "${!pids[@]}"; do
	if ! kill -0 "${pids[$i]}" 2>/dev/null; then
		echo "demo: ${names[$i]} exited; last log lines:" >&2
		tail -20 "$LOGS/${names[$i]}.log" >&2
	fi
done
exit 1
