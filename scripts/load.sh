#!/usr/bin/env bash
# load.sh: short wrk runs through Envoy with and without streamsub in the
# chain, interleaved in one run (A B A B ...), loopback only.
#   A = /bypass/big?size=SIZE  (route with ext_proc disabled: Envoy → origin)
#   B = /big?size=SIZE         (Envoy → streamsub rewrite → client)
# It starts the stack with scripts/demo.sh (ports 8080, 50051, 9090, 10000,
# 9901 must be free) unless LOAD_URL points at a running Envoy.
#
# Environment: ROUNDS (3), DURATION (5s), CONNS (16), THREADS (2),
# SIZE (262144 bytes of generated HTML), LOAD_URL (http://127.0.0.1:10000).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-16}
THREADS=${THREADS:-2}
SIZE=${SIZE:-262144}
URL=${LOAD_URL:-}

die() { echo "load: $*" >&2; exit 1; }
command -v wrk >/dev/null || die "wrk not found: apt-get install -y wrk"
[[ $CONNS -le 256 && $ROUNDS -le 20 ]] || die "keep CONNS <= 256 and ROUNDS <= 20"

demo_pid=
cleanup() {
	if [[ -n $demo_pid ]]; then
		kill -TERM "$demo_pid" 2>/dev/null || true
		wait "$demo_pid" 2>/dev/null || true
	fi
}
trap cleanup EXIT

if [[ -z $URL ]]; then
	URL=http://127.0.0.1:10000
	LOGS=$(mktemp -d "${TMPDIR:-/tmp}/streamsub-load.XXXXXX")
	DEMO_LOGS=$LOGS "$ROOT/scripts/demo.sh" >"$LOGS/demo.out" 2>&1 &
	demo_pid=$!
	for _ in $(seq 1 300); do
		grep -q 'demo is up' "$LOGS/demo.out" 2>/dev/null && break
		kill -0 "$demo_pid" 2>/dev/null || { cat "$LOGS/demo.out" >&2; die "demo.sh exited"; }
		sleep 0.1
	done
	grep -q 'demo is up' "$LOGS/demo.out" || die "stack not ready (logs in $LOGS)"
fi
case $URL in http://127.0.0.1:* | http://localhost:*) ;; *) die "LOAD_URL must be loopback" ;; esac

A="$URL/bypass/big?size=$SIZE"
B="$URL/big?size=$SIZE"
# Sanity: B is rewritten, A is not.
body=$(curl -fsS "$B") || die "GET $B failed"
grep -q clone.example.net <<<"$body" || die "$B is not rewritten"
body=$(curl -fsS "$A") || die "GET $A failed"
grep -q clone.example.net <<<"$body" && die "$A is rewritten: bypass route broken"

# run VARIANT URL: one wrk run, prints "VARIANT rps p50 p90 p99" (latencies in ms).
run() {
	local out
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$2")
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		echo "load: $1: $(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr '\n' ' ')" >&2
	fi
	awk -v v="$1" '
		function ms(s) {
			if (s ~ /us$/) return substr(s, 1, length(s)-2) / 1000
			if (s ~ /ms$/) return substr(s, 1, length(s)-2) + 0
			if (s ~ /s$/)  return substr(s, 1, length(s)-1) * 1000
			return s
		}
		/^ +50%/ { p50 = ms($2) } /^ +90%/ { p90 = ms($2) } /^ +99%/ { p99 = ms($2) }
		/^Requests\/sec:/ { rps = $2 }
		END { printf "%s %.1f %.2f %.2f %.2f\n", v, rps, p50, p90, p99 }' <<<"$out"
}

echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency; body $SIZE bytes; $ROUNDS rounds interleaved"
echo "A = Envoy only ($A)"
echo "B = Envoy + streamsub ($B)"
wrk -t1 -c4 -d1s "$A" >/dev/null # warm-up
wrk -t1 -c4 -d1s "$B" >/dev/null
results=$(
	for r in $(seq 1 "$ROUNDS"); do
		run A "$A"
		run B "$B"
	done
)
awk '
	BEGIN { printf "%-3s %5s %10s %9s %9s %9s\n", "run", "round", "req/s", "p50 ms", "p90 ms", "p99 ms" }
	{ n[$1]++; printf "%-3s %5d %10.1f %9.2f %9.2f %9.2f\n", $1, n[$1], $2, $3, $4, $5
	  rps[$1] += $2; p50[$1] += $3; p99[$1] += $5 }
	END {
		for (v in n) { rps[v] /= n[v]; p50[v] /= n[v]; p99[v] /= n[v] }
		printf "mean A: %.1f req/s, p50 %.2f ms, p99 %.2f ms\n", rps["A"], p50["A"], p99["A"]
		printf "mean B: %.1f req/s, p50 %.2f ms, p99 %.2f ms\n", rps["B"], p50["B"], p99["B"]
		printf "ratio B/A: req/s %.3f, p50 %.2fx, p99 %.2fx\n", rps["B"] / rps["A"], p50["B"] / p50["A"], p99["B"] / p99["A"]
	}' <<<"$results"
