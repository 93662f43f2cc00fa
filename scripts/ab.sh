#!/usr/bin/env bash
# ab.sh: an interleaved A/B run of streamsub builds and Envoy configurations
# through Envoy, for trying a change to the ext_proc path (BENCHMARKS.md,
# "Through Envoy: attempts"). Usage:
#
#   scripts/ab.sh DIR...
#
# Each DIR is a variant, named by the directory's base name, holding
#   streamsub   the binary (required)
#   env         optional KEY=VALUE lines added to its environment (GOGC=400)
#   args        optional extra `streamsub serve` flags
#   host        optional: the Host header of its requests (passthrough.test
#               picks scripts/load.yaml's rule set that matches nothing: the
#               ext_proc round trip alone; list it in NOCHECK)
#   envoyconf   optional envoyconf flags (-no-decoder), or
#   envoy.yaml  optional: an Envoy bootstrap of one's own, its ports written
#               @LISTEN@ @ADMIN@ @STREAMSUB@ @ORIGIN@ (render one with
#               envoy/cmd/envoyconf and edit it)
# Every variant runs its own `streamsub serve` and Envoy (--concurrency 2;
# rendered like envoy/envoy-local.yaml, with the header safety net of
# CONFIG), all at once on loopback, in front of one demo origin, and nginx with
# sub_filter runs beside them with the same rules (internal/nginxconf).
# Before timing, every target's body is checked against `streamsub apply`
# (VARIANT/bypass against the origin's). Then each round runs wrk against
# every target in turn, the order rotated by one each round, so that all see
# the same machine load; CPU µs per request of each process comes from
# /proc (utime + stime) around each wrk run, and streamsub's peak RSS from
# /proc/PID/status sampled every 0.2 s.
#
# Environment (defaults): TARGETS (every variant, then "sub"; also
# VARIANT/bypass: that variant's Envoy without ext_proc; NOCHECK lists
# targets whose bodies are not checked, for experiments that change them),
# ROUNDS (6), DURATION (8s), CONNS (32; a list runs each), SIZE (262144,
# bytes of /big), CONFIG (scripts/load.yaml), RESULTS (ab-results/UTC-TIME).
# Writes RESULTS/results.tsv and prints, per case, each target's medians
# over the rounds, then each target's per-round ratios to the first
# variant: median (min-max).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-6}
DURATION=${DURATION:-8s}
CONNS=${CONNS:-32}
SIZE=${SIZE:-262144}
CONFIG=${CONFIG:-$ROOT/scripts/load.yaml}
RESULTS=${RESULTS:-$ROOT/ab-results/$(date -u +%Y%m%dT%H%M%SZ)}
ENVOY=${ENVOY_BIN:-$(command -v envoy 2>/dev/null || echo "$ROOT/.venv/bin/envoy")}
ORIGIN_PORT=28080 SUB_PORT=28081 SUBS_PORT=28082

die() { echo "ab: $*" >&2; exit 1; }
[[ $# -ge 1 ]] || die "usage: scripts/ab.sh VARIANT_DIR..."
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 && $ROUNDS -le 50 ]] || die "ROUNDS=$ROUNDS: want 1..50"
[[ $DURATION =~ ^([0-9]+)s?$ && ${BASH_REMATCH[1]} -ge 1 && ${BASH_REMATCH[1]} -le 120 ]] || die "DURATION=$DURATION: want 1s..120s"
[[ $SIZE =~ ^[0-9]+$ && $SIZE -ge 1 && $SIZE -le $((64 << 20)) ]] || die "SIZE=$SIZE: want 1..64 MiB"
for c in $CONNS; do [[ $c =~ ^[0-9]+$ && $c -ge 1 && $c -le 256 ]] || die "CONNS: $c: want 1..256"; done
[[ $# -le 8 ]] || die "at most 8 variants"
command -v wrk >/dev/null || die "wrk is needed (make wrk)"
command -v nginx >/dev/null || die "nginx is needed (make nginx)"
[[ -x $ENVOY ]] || die "Envoy not found (ENVOY_BIN, PATH, .venv/bin/envoy)"
[[ -x $ROOT/bin/streamsub ]] || die "bin/streamsub not found (make build): it serves the origin"

declare -A DIR EPORT SPID EPID
NAMES=()
for d in "$@"; do
	v=$(basename "$d")
	[[ $v =~ ^[A-Za-z0-9_.-]+$ ]] || die "$d: a variant's name is its directory's base name: letters, digits, _ . -"
	[[ -x $d/streamsub ]] || die "$d/streamsub: not an executable"
	[[ -z ${DIR[$v]:-} ]] || die "two variants named $v"
	DIR[$v]=$(cd "$d" && pwd)
	NAMES+=("$v")
done
TARGETS=${TARGETS:-${NAMES[*]} sub}
NOCHECK=" ${NOCHECK:-} "

in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in $ORIGIN_PORT $SUB_PORT $SUBS_PORT; do in_use "$p" && die "127.0.0.1:$p is in use"; done
for i in "${!NAMES[@]}"; do
	EPORT[${NAMES[$i]}]=$((28100 + 100 * i))
	for k in 0 1 2 3; do in_use $((28100 + 100 * i + k)) && die "127.0.0.1:$((28100 + 100 * i + k)) is in use"; done
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/streamsub-ab.XXXXXX")
chmod 755 "$WORK" # nginx's workers run as nobody
mkdir -p "$RESULTS"
pids=() ok=
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ -n $ok ]]; then rm -rf "$WORK"; else echo "ab: logs kept in $WORK" >&2; fi
}
trap cleanup EXIT
(cd "$ROOT" && go build -o "$WORK/envoyconf" ./envoy/cmd/envoyconf && go build -o "$WORK/nginxconf" ./internal/nginxconf/cmd/nginxconf &&
	go build -o "$WORK/abreport" ./internal/abreport/cmd/abreport) || die "go build failed"

# ready URL PID NAME: wait until URL answers, failing if PID exits.
ready() {
	for _ in $(seq 1 300); do
		curl -fs -o /dev/null "$1" && return 0
		kill -0 "$2" 2>/dev/null || die "$3 exited (logs in $WORK)"
		sleep 0.1
	done
	die "$3 not ready at $1 (logs in $WORK)"
}

"$ROOT/bin/streamsub" demo-origin -listen 127.0.0.1:$ORIGIN_PORT >"$WORK/origin.log" 2>&1 &
ORIGIN_PID=$!
pids+=("$ORIGIN_PID")
ready "http://127.0.0.1:$ORIGIN_PORT/empty" "$ORIGIN_PID" origin
for v in "${NAMES[@]}"; do
	d=${DIR[$v]} base=${EPORT[$v]}
	(
		if [[ -f $d/env ]]; then set -a && . "$d/env" && set +a; fi
		# shellcheck disable=SC2046 # args holds flags, split on purpose
		exec "$d/streamsub" serve -config "$CONFIG" -listen 127.0.0.1:$((base + 2)) -admin 127.0.0.1:$((base + 3)) \
			-log-level warn $(cat "$d/args" 2>/dev/null)
	) >"$WORK/streamsub-$v.log" 2>&1 &
	SPID[$v]=$!
	pids+=("$!")
	if [[ -f $d/envoy.yaml ]]; then
		sed -e "s/@LISTEN@/$base/g; s/@ADMIN@/$((base + 1))/g; s/@STREAMSUB@/$((base + 2))/g; s/@ORIGIN@/$ORIGIN_PORT/g" \
			"$d/envoy.yaml" >"$WORK/envoy-$v.yaml"
	else
		# shellcheck disable=SC2046
		"$WORK/envoyconf" -listen-port "$base" -admin-port $((base + 1)) -streamsub 127.0.0.1:$((base + 2)) \
			-origin 127.0.0.1:$ORIGIN_PORT -config "$CONFIG" $(cat "$d/envoyconf" 2>/dev/null) -o "$WORK/envoy-$v.yaml"
	fi
done
for v in "${NAMES[@]}"; do
	base=${EPORT[$v]}
	ready "http://127.0.0.1:$((base + 3))/healthz" "${SPID[$v]}" "streamsub $v"
	"$ENVOY" -c "$WORK/envoy-$v.yaml" --disable-hot-restart --concurrency 2 --base-id $((base / 100)) >"$WORK/envoy-$v.log" 2>&1 &
	EPID[$v]=$!
	pids+=("$!")
done
RULESET=$("$WORK/nginxconf" -config "$CONFIG" -host 127.0.0.1 -origin 127.0.0.1:$ORIGIN_PORT \
	-sub-listen 127.0.0.1:$SUB_PORT -subs-listen 127.0.0.1:$SUBS_PORT -dir "$WORK" -o "$WORK/nginx.conf") ||
	die "cannot write the nginx configuration"
nginx -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" >"$WORK/nginx.log" 2>&1 &
NGINX_PID=$!
pids+=("$NGINX_PID")
for v in "${NAMES[@]}"; do ready "http://127.0.0.1:$((EPORT[$v] + 1))/ready" "${EPID[$v]}" "Envoy $v"; done
for _ in $(seq 1 100); do in_use $SUB_PORT && break; sleep 0.05; done

# url_of TARGET; procs_of TARGET: "PROXY_PID STREAMSUB_PID" (0: none).
url_of() {
	case $1 in
	sub) echo "http://127.0.0.1:$SUB_PORT/big?size=$SIZE" ;;
	*/bypass) echo "http://127.0.0.1:${EPORT[${1%/bypass}]}/bypass/big?size=$SIZE" ;;
	*) echo "http://127.0.0.1:${EPORT[$1]}/big?size=$SIZE" ;;
	esac
}
# host_of TARGET: the Host header its requests carry, if the variant sets one.
host_of() {
	local v=${1%/bypass}
	if [[ $1 != sub && -f ${DIR[$v]}/host ]]; then echo "Host: $(<"${DIR[$v]}/host")"; fi
}
procs_of() {
	case $1 in
	sub) echo "$NGINX_PID 0" ;;
	*/bypass) echo "${EPID[${1%/bypass}]} 0" ;;
	*) echo "${EPID[$1]} ${SPID[$1]}" ;;
	esac
}
for t in $TARGETS; do
	v=${t%/bypass}
	[[ $t == sub || -n ${EPORT[$v]:-} ]] || die "TARGETS: $t: no such variant"
done

curl -fsS -o "$WORK/origin.body" "http://127.0.0.1:$ORIGIN_PORT/big?size=$SIZE" || die "GET the origin failed"
"$ROOT/bin/streamsub" apply -config "$CONFIG" -ruleset "$RULESET" -o "$WORK/want.body" "$WORK/origin.body" ||
	die "streamsub apply failed"
for t in $TARGETS; do
	f=$WORK/got-${t//\//_}.body
	h=$(host_of "$t")
	curl -fsS ${h:+-H "$h"} -o "$f" "$(url_of "$t")" || die "GET $t failed"
	want=$WORK/want.body
	[[ $t == */bypass ]] && want=$WORK/origin.body
	[[ $NOCHECK == *" $t "* ]] || cmp -s "$want" "$f" || die "$t: the body differs from the expected one ($f, $want)"
done

HZ=$(getconf CLK_TCK)
# ticks PID: CPU ticks (utime + stime) of PID and its children (nginx's workers).
ticks() {
	local t=0 p
	[[ $1 == 0 ]] && { echo 0; return; }
	for p in "$1" $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		t=$((t + $(awk '{ sub(/^[0-9]+ \(.*\) /, ""); print $12 + $13 }' /proc/"$p"/stat)))
	done
	echo "$t"
}

TSV=$RESULTS/results.tsv
printf 'round\ttarget\tconns\tsize\trequests\trps\tp50_ms\tp99_ms\terrors\tproxy_us\tstreamsub_us\torigin_us\tstreamsub_rss_kib\n' >"$TSV"
for t in $TARGETS; do
	h=$(host_of "$t")
	wrk -t1 -c4 -d1s ${h:+-H "$h"} "$(url_of "$t")" >/dev/null
done
echo "ab: $(wc -w <<<"$TARGETS") targets × $ROUNDS rounds × {$CONNS} connections, $DURATION each, $SIZE-byte page; load $(cut -d' ' -f1-3 /proc/loadavg)"
read -ra T <<<"$TARGETS"
for r in $(seq 1 "$ROUNDS"); do
	for c in $CONNS; do
		for k in "${!T[@]}"; do
			t=${T[$(((k + r) % ${#T[@]}))]}
			read -r pp sp <<<"$(procs_of "$t")"
			rm -f "$WORK/stop"
			rss=0
			[[ $sp != 0 ]] && { "$ROOT/scripts/peak-rss.sh" "$sp" "$WORK/stop" >"$WORK/rss" & }
			p0=$(ticks "$pp") s0=$(ticks "$sp") o0=$(ticks "$ORIGIN_PID")
			h=$(host_of "$t")
			out=$(wrk -t$((c < 2 ? c : 2)) -c"$c" -d"$DURATION" --timeout 10s --latency ${h:+-H "$h"} "$(url_of "$t")")
			p1=$(ticks "$pp") s1=$(ticks "$sp") o1=$(ticks "$ORIGIN_PID")
			touch "$WORK/stop"
			[[ $sp != 0 ]] && { wait $! || true; rss=$(<"$WORK/rss"); }
			awk -v r="$r" -v t="$t" -v c="$c" -v size="$SIZE" -v hz="$HZ" -v rss="$rss" \
				-v dp=$((p1 - p0)) -v ds=$((s1 - s0)) -v dorig=$((o1 - o0)) '
				function ms(s) {
					if (s ~ /us$/) return substr(s, 1, length(s) - 2) / 1000
					if (s ~ /ms$/) return substr(s, 1, length(s) - 2) + 0
					if (s ~ /s$/) return substr(s, 1, length(s) - 1) * 1000
					return s
				}
				/ requests in / { req = $1 }
				/^ +50%/ { p50 = ms($2) } /^ +99%/ { p99 = ms($2) }
				/^Requests\/sec:/ { rps = $2 }
				/Non-2xx or 3xx responses:/ { e += $NF }
				/Socket errors:/ { l = $0; gsub(/[^0-9]+/, " ", l); n = split(l, x, " "); for (i = 1; i <= n; i++) e += x[i] }
				END {
					k = req > 0 ? 1e6 / hz / req : 0
					printf "%d\t%s\t%d\t%d\t%d\t%.1f\t%.3f\t%.3f\t%d\t%.0f\t%.0f\t%.0f\t%d\n",
						r, t, c, size, req, rps, p50, p99, e + 0, dp * k, ds * k, dorig * k, rss
				}' <<<"$out" | tee -a "$TSV"
		done
	done
done
echo "ab: load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
"$WORK/abreport" -in "$TSV" -base "${NAMES[0]}" | tee "$RESULTS/summary.txt"
ok=1
