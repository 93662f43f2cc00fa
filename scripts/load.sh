#!/usr/bin/env bash
# load.sh: the through-proxy benchmark (BENCHMARKS.md "Through Envoy"). On
# loopback, one interleaved run (a b c d a b c d ...) of wrk against the same
# generated page from the demo origin through
#   (a) envoy        Envoy alone (/bypass/: ext_proc disabled)
#   (b) streamsub    Envoy + streamsub
#   (c) sub_filter   nginx with sub_filter
#   (d) subs_filter  nginx with subs_filter (substitutions filter module)
#   (e) passthrough  Envoy + streamsub with a rule set that matches nothing
# with the same rules: those of the rule set streamsub applies to these
# requests (scripts/load.yaml: the example's "standard" rule set without its
# regex rule, literal strings only), which internal/nginxconf writes into
# the nginx configuration. (e) asks for host passthrough.test, which the
# config maps to a rule set of the same content types whose one rule occurs
# in no generated page: the body still goes to streamsub and back, so (e) is
# the ext_proc round trip alone, the floor under (b). Before timing,
# every target's body is checked byte for byte: (a) and (e) must be the
# origin's, (b), (c) and (d) must equal `streamsub apply` of it, and (e) must
# have been streamed.
#
# Per target and case: req/s, p50/p99 latency (wrk --latency), CPU µs per
# request of each process in the path (proxy = Envoy or nginx master and
# workers, streamsub, origin) from /proc/PID/stat utime+stime over the run,
# and for (b) and (e) the ext_proc body calls per response (streamsub's metrics)
# and streamsub's peak resident set during the run (scripts/peak-rss.sh).
# Cases: each page size of SIZES (/big: flushed every 32 KiB) and a trickle
# row (/trickle: flushed every CHUNK bytes, PAUSE µs apart, so that the proxy
# gets many small reads: many body calls), times each connection count; and,
# through (a) and (b) only, a static row: /static/app.css, 64 KiB that no rule
# matches, with an etag, which streamsub remembers after the first response
# (the config's remember section) and then skips without streaming it.
#
# It starts the demo stack with scripts/demo.sh (ports 8080, 50051, 9090,
# 10000 and 9901 must be free) and nginx on two free ports from 18081, and
# writes results.tsv, table.md, plot.svg and nginx.conf to RESULTS.
#
# Environment (defaults): ROUNDS (3), DURATION (5s per wrk run), CONNS (16;
# a list such as "32 1" runs each), CONNS1=1 (adds 1 connection to CONNS,
# for latency), THREADS (2, at most CONNS), SIZES ("16384 262144 4194304"
# bytes), TRICKLE (262144:1024:100, SIZE:CHUNK:PAUSE_US; empty for none), STATIC
# (1: the static row; empty for none), NGINX_WORKERS
# (2, as Envoy's --concurrency), STREAMSUB_CONFIG (scripts/load.yaml),
# RESULTS (load-results/UTC-TIME), GO (go).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-16}
[[ ${CONNS1:-} == 1 ]] && CONNS="$CONNS 1"
THREADS=${THREADS:-2}
SIZES=${SIZES:-16384 262144 4194304}
TRICKLE=${TRICKLE-262144:1024:100}
STATIC=${STATIC-1}
NGINX_WORKERS=${NGINX_WORKERS:-2}
CONFIG=${STREAMSUB_CONFIG:-$ROOT/scripts/load.yaml}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=${RESULTS:-$ROOT/load-results/$STAMP}
GO=${GO:-go}
BIN=${STREAMSUB_BIN:-$ROOT/bin/streamsub}
SUBS_MODULE=/usr/lib/nginx/modules/ngx_http_subs_filter_module.so
TARGETS=(envoy streamsub sub_filter subs_filter passthrough)
# PASSTHROUGH_HOST: the host whose rule set matches nothing (target (e)).
PASSTHROUGH_HOST=passthrough.test

die() { echo "load: $*" >&2; exit 1; }

# Bounds: loopback only, a bounded run.
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 && $ROUNDS -le 20 ]] || die "ROUNDS=$ROUNDS: want 1..20"
[[ $DURATION =~ ^([0-9]+)(s?)$ ]] && secs=${BASH_REMATCH[1]} && [[ $secs -ge 1 && $secs -le 120 ]] ||
	die "DURATION=$DURATION: want 1s..120s"
[[ $THREADS =~ ^[0-9]+$ && $THREADS -ge 1 && $THREADS -le 16 ]] || die "THREADS=$THREADS: want 1..16"
[[ $NGINX_WORKERS =~ ^[0-9]+$ && $NGINX_WORKERS -ge 1 && $NGINX_WORKERS -le 16 ]] || die "NGINX_WORKERS: want 1..16"
for c in $CONNS; do [[ $c =~ ^[0-9]+$ && $c -ge 1 && $c -le 256 ]] || die "CONNS: $c: want 1..256"; done
for s in $SIZES; do [[ $s =~ ^[0-9]+$ && $s -ge 1 && $s -le $((64 << 20)) ]] || die "SIZES: $s: want 1..64 MiB"; done
# PAGES: "KIND SIZE CHUNK PAUSE" per case.
PAGES=()
for s in $SIZES; do PAGES+=("big $s 0 0"); done
if [[ -n $TRICKLE ]]; then
	[[ $TRICKLE =~ ^([0-9]+):([0-9]+)(:([0-9]+))?$ ]] || die "TRICKLE=$TRICKLE: want SIZE:CHUNK[:PAUSE_US]"
	tsize=${BASH_REMATCH[1]} tchunk=${BASH_REMATCH[2]} tpause=${BASH_REMATCH[4]:-0}
	[[ $tsize -ge 1 && $tsize -le $((64 << 20)) && $tchunk -ge 1 && $tchunk -le $((1 << 20)) && $tpause -le 10000 ]] ||
		die "TRICKLE=$TRICKLE: want SIZE 1..64 MiB, CHUNK 1..1 MiB, PAUSE 0..10000 µs"
	PAGES+=("trickle $tsize $tchunk $tpause")
fi
case $STATIC in
1) PAGES+=("static 65536 0 0") ;; # demoorigin.StaticSize
'') ;;
*) die "STATIC=$STATIC: want 1 or empty" ;;
esac
[[ ${#PAGES[@]} -gt 0 ]] || die "no pages: set SIZES, TRICKLE or STATIC"

# Tools: wrk, nginx and its substitutions filter module from Debian.
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
{ command -v nginx >/dev/null && [[ -e $SUBS_MODULE ]]; } ||
	{ apt-get update -qq && apt-get install -y -qq nginx libnginx-mod-http-subs-filter; }
command -v curl >/dev/null || die "curl is needed"
[[ -x $BIN ]] || die "$BIN not found: run make build"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/streamsub-load.XXXXXX")
# nginx's workers run as nobody: let them reach their temp directories.
chmod 755 "$WORK"
LOGS=$WORK/demo
NGX=$WORK/nginx
mkdir -p "$LOGS" "$NGX" "$RESULTS"
(cd "$ROOT" && "$GO" build -o "$WORK/nginxconf" ./internal/nginxconf/cmd/nginxconf &&
	"$GO" build -o "$WORK/loadreport" ./internal/loadreport/cmd/loadreport) || die "go build failed"

demo_pid= nginx_pid= ok=
cleanup() {
	if [[ -n $nginx_pid ]]; then
		kill -TERM "$nginx_pid" 2>/dev/null || true
		wait "$nginx_pid" 2>/dev/null || true
	fi
	if [[ -n $demo_pid ]]; then
		kill -TERM "$demo_pid" 2>/dev/null || true
		wait "$demo_pid" 2>/dev/null || true
	fi
	if [[ -n $ok ]]; then
		rm -rf "$WORK"
	else
		echo "load: logs and bodies kept in $WORK" >&2
	fi
}
trap cleanup EXIT

# The demo stack: origin :8080, streamsub :50051 (admin :9090), Envoy :10000.
DEMO_LOGS=$LOGS STREAMSUB_BIN=$BIN STREAMSUB_CONFIG=$CONFIG "$ROOT/scripts/demo.sh" >"$LOGS/demo.out" 2>&1 &
demo_pid=$!
for _ in $(seq 1 300); do
	grep -q 'demo is up' "$LOGS/demo.out" 2>/dev/null && break
	kill -0 "$demo_pid" 2>/dev/null || { cat "$LOGS/demo.out" >&2; die "demo.sh exited"; }
	sleep 0.1
done
grep -q 'demo is up' "$LOGS/demo.out" || die "stack not ready (logs in $LOGS)"
ENVOY_PID=$(<"$LOGS/envoy.pid") STREAMSUB_PID=$(<"$LOGS/streamsub.pid") ORIGIN_PID=$(<"$LOGS/origin.pid")

# nginx on two free loopback ports, foreground, everything under $NGX.
free_port() { # free_port FROM: the first port from FROM that nothing listens on
	local p
	for ((p = $1; p < $1 + 200; p++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
	die "no free port in $1..$(($1 + 199))"
}
SUB_ADDR=127.0.0.1:$(free_port 18081)
SUBS_ADDR=127.0.0.1:$(free_port $((${SUB_ADDR#*:} + 1)))
RULESET=$("$WORK/nginxconf" -config "$CONFIG" -host 127.0.0.1:10000 -origin 127.0.0.1:8080 \
	-sub-listen "$SUB_ADDR" -subs-listen "$SUBS_ADDR" -dir "$NGX" -module "$SUBS_MODULE" \
	-workers "$NGINX_WORKERS" -o "$NGX/nginx.conf") || die "cannot write the nginx configuration"
cp "$NGX/nginx.conf" "$RESULTS/nginx.conf"
nginx -p "$NGX" -c "$NGX/nginx.conf" -e "$NGX/error.log" >"$NGX/stdout.log" 2>&1 &
nginx_pid=$!
for addr in "$SUB_ADDR" "$SUBS_ADDR"; do
	for _ in $(seq 1 100); do
		(exec 3<>"/dev/tcp/${addr/:/\/}") 2>/dev/null && break
		kill -0 "$nginx_pid" 2>/dev/null || { cat "$NGX/error.log" >&2; die "nginx exited"; }
		sleep 0.05
	done
	(exec 3<>"/dev/tcp/${addr/:/\/}") 2>/dev/null || die "nginx not listening on $addr (logs in $NGX)"
done

path_of() { # path_of KIND SIZE CHUNK PAUSE
	case $1 in
	trickle) echo "/trickle?size=$2&chunk=$3&pause=$4" ;;
	static) echo "/static/app.css" ;;
	*) echo "/big?size=$2" ;;
	esac
}
targets_of() { # targets_of KIND: the targets that run its cases
	if [[ $1 == static ]]; then echo "envoy streamsub"; else echo "${TARGETS[*]}"; fi
}
# metric SERIES: the value of one of streamsub's metric series (name and labels as exposed), 0 if absent.
metric() {
	curl -fsS http://127.0.0.1:9090/metrics | awk -v series="$1" '$1 == series { n = $2 } END { printf "%.0f\n", n }'
}
# remembered: streamsub's count of bodies skipped because it remembered that no rule matched them.
remembered() { metric 'streamsub_bodies_skipped_total{reason="remembered_no_match"}'; }
url_of() { # url_of TARGET PATH
	case $1 in
	envoy) echo "http://127.0.0.1:10000/bypass$2" ;;
	streamsub | passthrough) echo "http://127.0.0.1:10000$2" ;;
	sub_filter) echo "http://$SUB_ADDR$2" ;;
	subs_filter) echo "http://$SUBS_ADDR$2" ;;
	esac
}
# host_of TARGET: the Host header its requests carry, if not the URL's.
host_of() { if [[ $1 == passthrough ]]; then echo "Host: $PASSTHROUGH_HOST"; fi; }
# streamed RULE_SET: bodies streamsub has streamed for that rule set so far.
streamed() { metric "streamsub_bodies_rewritten_total{rule_set=\"$1\"}"; }

# differs WANT GOT NAME: fail loudly with where and how GOT differs.
differs() {
	local at
	at=$(cmp "$1" "$2" 2>&1 | grep -o 'byte [0-9]*' | grep -o '[0-9]*' || true)
	{
		echo "load: $3: body differs from the expected one ($(wc -c <"$2") bytes, want $(wc -c <"$1"))"
		if [[ -n $at ]]; then
			echo "  first difference at byte $at; 60 bytes from 30 before it:"
			echo "  want: $(tail -c +$((at > 30 ? at - 30 : 1)) "$1" | head -c 60 | tr '\n' ' ')"
			echo "  got:  $(tail -c +$((at > 30 ? at - 30 : 1)) "$2" | head -c 60 | tr '\n' ' ')"
		fi
		echo "  bodies in $WORK/bodies"
	} >&2
	exit 1
}

# Byte-for-byte check of every target on every page, before any timing.
mkdir -p "$WORK/bodies"
for page in "${PAGES[@]}"; do
	read -r kind size chunk pause <<<"$page"
	path=$(path_of "$kind" "$size" "$chunk" "$pause")
	d=$WORK/bodies/$kind-$size
	curl -fsS -o "$d.origin" "http://127.0.0.1:8080$path" || die "GET origin $path failed"
	"$BIN" apply -config "$CONFIG" -ruleset "$RULESET" -o "$d.want" "$d.origin" || die "streamsub apply failed"
	if [[ $kind == static ]]; then
		cmp -s "$d.origin" "$d.want" || die "$path: rule set $RULESET changes it; the static row needs a file no rule matches"
	else
		cmp -s "$d.origin" "$d.want" && die "$path: rule set $RULESET changes nothing in it"
	fi
	p0=$(streamed passthrough)
	for t in $(targets_of "$kind"); do
		h=$(host_of "$t")
		curl -fsS ${h:+-H "$h"} -o "$d.$t" "$(url_of "$t" "$path")" || die "GET $t $path failed"
	done
	cmp -s "$d.origin" "$d.envoy" || differs "$d.origin" "$d.envoy" "(a) Envoy $path (must be the origin's)"
	cmp -s "$d.want" "$d.streamsub" || differs "$d.want" "$d.streamsub" "(b) Envoy + streamsub $path"
	if [[ $kind == static ]]; then
		# The first response taught streamsub that no rule matches: the next is skipped.
		r0=$(remembered)
		curl -fsS -o "$d.streamsub2" "$(url_of streamsub "$path")" || die "GET streamsub $path failed"
		cmp -s "$d.origin" "$d.streamsub2" || differs "$d.origin" "$d.streamsub2" "(b) Envoy + streamsub $path, remembered"
		[[ $(remembered) -gt $r0 ]] || die "(b) $path: not skipped the second time (is remember on in $CONFIG?)"
		echo "checked $path: (a) = (b) = origin = streamsub apply ($size bytes); (b) remembered it and skipped the second response"
		continue
	fi
	cmp -s "$d.streamsub" "$d.sub_filter" || differs "$d.streamsub" "$d.sub_filter" "(c) nginx sub_filter $path (semantics differ from streamsub's)"
	cmp -s "$d.streamsub" "$d.subs_filter" || differs "$d.streamsub" "$d.subs_filter" "(d) nginx subs_filter $path (semantics differ from streamsub's)"
	cmp -s "$d.origin" "$d.passthrough" || differs "$d.origin" "$d.passthrough" "(e) Envoy + streamsub, host $PASSTHROUGH_HOST, $path (must be the origin's)"
	[[ $(streamed passthrough) -gt $p0 ]] ||
		die "(e) $path: not streamed for rule set passthrough (does $CONFIG map $PASSTHROUGH_HOST to it, as scripts/load.yaml does?)"
	echo "checked $path: (a) = (e) = origin ($size bytes), (e) streamed; (b) = (c) = (d) = streamsub apply ($(wc -c <"$d.want") bytes)"
done

# cpu_us NAME=PID...: per name, the CPU µs (utime + stime) used so far by
# that process and all its descendants (nginx's workers), from /proc.
HZ=$(getconf CLK_TCK)
cpu_us() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v roots="$*" -v hz="$HZ" '
		{ pid = $1; line = $0; sub(/^[0-9]+ \(.*\) /, "", line); split(line, f, " ")
		  ppid[pid] = f[2]; ticks[pid] = f[12] + f[13] }
		END {
			n = split(roots, r, " ")
			for (i = 1; i <= n; i++) {
				split(r[i], kv, "="); delete in_; in_[kv[2]] = 1
				for (grew = 1; grew;) {
					grew = 0
					for (p in ppid) if (!(p in in_) && (ppid[p] in in_)) { in_[p] = 1; grew = 1 }
				}
				t = 0; for (p in in_) t += ticks[p]
				printf "%s%.0f", (i > 1 ? " " : ""), t * 1e6 / hz
			}
			print ""
		}'
}
# body_calls: ext_proc body messages and rewritten bodies so far (streamsub's metrics).
body_calls() {
	curl -fsS http://127.0.0.1:9090/metrics | awk '
		/^streamsub_chunk_processing_seconds_count / { c = $2 }
		/^streamsub_bodies_rewritten_total/ { b += $2 }
		END { printf "%.0f %.0f\n", c, b }'
}

# run ROUND KIND SIZE CHUNK PAUSE CONNS TARGET: one wrk run, one results line.
run() {
	local round=$1 kind=$2 size=$3 chunk=$4 pause=$5 conns=$6 t=$7 url h out c0 c1 b0 b1 ext= rss=- rss_pid
	url=$(url_of "$t" "$(path_of "$kind" "$size" "$chunk" "$pause")")
	h=$(host_of "$t")
	[[ $t == streamsub || $t == passthrough ]] && ext=1
	if [[ -n $ext ]]; then
		b0=$(body_calls)
		rm -f "$WORK/rss.stop"
		"$ROOT/scripts/peak-rss.sh" "$STREAMSUB_PID" "$WORK/rss.stop" >"$WORK/rss" &
		rss_pid=$!
	fi
	c0=$(cpu_us envoy="$ENVOY_PID" nginx="$nginx_pid" streamsub="$STREAMSUB_PID" origin="$ORIGIN_PID")
	out=$(wrk -t"$((THREADS < conns ? THREADS : conns))" -c"$conns" -d"$DURATION" --timeout 10s --latency ${h:+-H "$h"} "$url")
	c1=$(cpu_us envoy="$ENVOY_PID" nginx="$nginx_pid" streamsub="$STREAMSUB_PID" origin="$ORIGIN_PID")
	if [[ -n $ext ]]; then
		b1=$(body_calls)
		touch "$WORK/rss.stop"
		wait "$rss_pid" || true
		rss=$(<"$WORK/rss")
	fi
	awk -v round="$round" -v kind="$kind" -v size="$size" -v chunk="$chunk" -v pause="$pause" -v conns="$conns" -v t="$t" \
		-v ext="$ext" -v rss="$rss" -v c0="$c0" -v c1="$c1" -v b0="${b0:-}" -v b1="${b1:-}" '
		function ms(s) {
			if (s ~ /us$/) return substr(s, 1, length(s) - 2) / 1000
			if (s ~ /ms$/) return substr(s, 1, length(s) - 2) + 0
			if (s ~ /s$/) return substr(s, 1, length(s) - 1) * 1000
			return s
		}
		/ requests in / { req = $1; secs = $4; sub(/s,?$/, "", secs) }
		/^ +50%/ { p50 = ms($2) } /^ +99%/ { p99 = ms($2) }
		/^Requests\/sec:/ { rps = $2 }
		/Non-2xx or 3xx responses:/ { errors += $NF }
		/Socket errors:/ { line = $0; gsub(/[^0-9]+/, " ", line); n = split(line, e, " "); for (i = 1; i <= n; i++) errors += e[i] }
		END {
			split(c0, a, " "); split(c1, b, " ")   # envoy nginx streamsub origin
			proxy = (t == "sub_filter" || t == "subs_filter") ? b[2] - a[2] : b[1] - a[1]
			ss = ext ? sprintf("%d", b[3] - a[3]) : "-"
			calls = "-"
			if (ext) { split(b0, x, " "); split(b1, y, " "); if (y[2] > x[2]) calls = sprintf("%.1f", (y[1] - x[1]) / (y[2] - x[2])) }
			printf "%d\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%.1f\t%.3f\t%.3f\t%d\t%d\t%s\t%d\t%s\t%s\n",
				round, kind, size, chunk, pause, conns, t, req, secs, rps, p50, p99, errors + 0, proxy, ss, b[4] - a[4], calls, rss
		}' <<<"$out"
}

TSV=$RESULTS/results.tsv
printf 'round\tpage\tsize\tchunk\tpause_us\tconns\ttarget\trequests\tseconds\trps\tp50_ms\tp99_ms\terrors\tproxy_cpu_us\tstreamsub_cpu_us\torigin_cpu_us\tbody_calls\tstreamsub_rss_kib\n' >"$TSV"
nconns=$(wc -w <<<"$CONNS")
total=0
for page in "${PAGES[@]}"; do
	total=$((total + ROUNDS * nconns * $(targets_of "${page%% *}" | wc -w)))
done
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v n="$(nproc)" '$1 > n { printf "load: load average %s on %d cores: the machine is busy, the figures will be noisy\n", $1, n > "/dev/stderr" }' /proc/loadavg
echo "rule set \"$RULESET\" of ${CONFIG#"$ROOT"/}; nginx sub_filter on $SUB_ADDR, subs_filter on $SUBS_ADDR"
echo "$total wrk runs of $DURATION (-t$THREADS -c{$CONNS} --latency), $ROUNDS round(s) interleaved; about $((total * (secs + 1) / 60 + 1)) min"
# Warm-up: each target once on the first page.
read -r kind size chunk pause <<<"${PAGES[0]}"
for t in "${TARGETS[@]}"; do
	h=$(host_of "$t")
	wrk -t1 -c4 -d1s ${h:+-H "$h"} "$(url_of "$t" "$(path_of "$kind" "$size" "$chunk" "$pause")")" >/dev/null
done
n=0
for round in $(seq 1 "$ROUNDS"); do
	for page in "${PAGES[@]}"; do
		read -r kind size chunk pause <<<"$page"
		for conns in $CONNS; do
			for t in $(targets_of "$kind"); do
				line=$(run "$round" "$kind" "$size" "$chunk" "$pause" "$conns" "$t")
				echo "$line" >>"$TSV"
				n=$((n + 1))
				awk -F'\t' -v n="$n" -v total="$total" '{ printf "[%d/%d] round %d %s %d c%d %-11s %9.1f req/s p50 %.2f ms p99 %.2f ms errors %d\n", n, total, $1, $2, $3, $6, $7, $10, $11, $12, $13 }' <<<"$line"
			done
		done
	done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
[[ -s $NGX/error.log ]] && { echo "nginx error log:" >&2; tail -5 "$NGX/error.log" >&2; }

# Report: the markdown table with how it was measured, and the plot.
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || commit="$commit (with local changes)"
envoy_v=$("${ENVOY_BIN:-$(command -v envoy 2>/dev/null || echo "$ROOT/.venv/bin/envoy")}" --version 2>/dev/null | grep -o '[0-9]\+\.[0-9]\+\.[0-9]\+' | head -1 || true)
nginx_v=$(nginx -v 2>&1 | grep -o '[0-9][0-9.]*' | head -1 || true)
wrk_v=$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2 || true)
rounds="$ROUNDS round$([[ $ROUNDS == 1 ]] || echo s)"
subtitle="wrk -t$THREADS -c{$CONNS} -d$DURATION, $rounds interleaved, loopback; $(nproc) × $cpu, load $LOAD_START; $STAMP"
"$WORK/loadreport" -in "$TSV" -md "$WORK/table.md" -svg "$RESULTS/plot.svg" \
	-title "streamsub through Envoy vs nginx sub_filter / subs_filter (rule set $RULESET)" -subtitle "$subtitle"
{
	echo "# Through-proxy benchmark, $STAMP"
	echo
	echo "- Command: \`ROUNDS=$ROUNDS DURATION=$DURATION CONNS=\"$CONNS\" THREADS=$THREADS SIZES=\"$SIZES\" TRICKLE=$TRICKLE STATIC=$STATIC make load\` at commit $commit."
	echo "- Machine: $(nproc) × $cpu, $mem, Linux $(uname -r); load average $LOAD_START at the start, $LOAD_END at the end."
	echo "- Software: Envoy $envoy_v (--concurrency 2), nginx $nginx_v ($NGINX_WORKERS workers), $wrk_v, $("$GO" version | cut -d' ' -f3)."
	echo "- Rules: rule set \"$RULESET\" of ${CONFIG#"$ROOT"/}, the same in nginx ([nginx.conf](nginx.conf)); (e) asks for host $PASSTHROUGH_HOST, whose rule set matches nothing: its bodies go to streamsub and back unchanged. Before timing, (a)'s and (e)'s bodies were the origin's and (b), (c), (d) were byte-identical to \`streamsub apply\` on every page."
	echo "- Each row: median over the rounds of req/s and latency; CPU µs per request = the process's CPU time over all rounds / requests completed; proxy = Envoy for (a), (b) and (e), nginx master + workers for (c) and (d); streamsub RSS = the largest resident set sampled (every 0.2 s) during the rounds."
	echo
	cat "$WORK/table.md"
	echo
	echo "![req/s and CPU per request](plot.svg)"
} >"$RESULTS/table.md"
cat "$RESULTS/table.md"
echo
echo "results in ${RESULTS#"$ROOT"/}: results.tsv, table.md, plot.svg, nginx.conf"
ok=1
