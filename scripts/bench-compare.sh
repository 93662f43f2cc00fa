#!/usr/bin/env bash
# bench-compare.sh BASE: the matcher benchmarks of commit BASE against the
# work tree, interleaved (one run of each binary per round, ROUNDS rounds) and
# compared with benchstat; with CALLGRIND=1 also instructions per op from
# callgrind (noise-free, GOGC=off, one thread): -benchtime Nx runs one op and
# then N, -benchtime 1x one op, so (I(Nx) - I(1x)) / N is the cost of one op.
#
# Environment: ROUNDS (10), BENCH (the regexp below), BENCHTIME (300ms),
# CALLGRIND (0), OUT (a new temp dir). Installs benchstat into .bin/ and,
# with CALLGRIND=1, valgrind from Debian's package when missing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${1:?usage: bench-compare.sh BASE-REVISION}
ROUNDS=${ROUNDS:-10}
BENCH=${BENCH:-'BenchmarkRewrite/work=.*/engine=(stream16k|whole)$|BenchmarkMatchCost|BenchmarkHeaderSet$|BenchmarkHeaderFilterRequest'}
BENCHTIME=${BENCHTIME:-300ms}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")}
GO=${GO:-go}
mkdir -p "$OUT"

[[ -x $ROOT/.bin/benchstat ]] || GOBIN=$ROOT/.bin $GO install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

tree=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare-base.XXXXXX")
trap 'git -C "$ROOT" worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
git -C "$ROOT" worktree add --detach -q "$tree" "$BASE"
(cd "$tree" && $GO test -c -o "$OUT/old.test" ./matcher/)
(cd "$ROOT" && $GO test -c -o "$OUT/new.test" ./matcher/)

# The header set benchmarks read testdata/ relative to the package.
cd "$ROOT/matcher"
rm -f "$OUT/old.txt" "$OUT/new.txt"
for r in $(seq 1 "$ROUNDS"); do
	echo "round $r/$ROUNDS" >&2
	for v in old new; do
		"$OUT/$v.test" -test.run '^$' -test.bench "$BENCH" -test.benchmem -test.count 1 \
			-test.benchtime "$BENCHTIME" >>"$OUT/$v.txt"
	done
done
"$ROOT/.bin/benchstat" "$OUT/old.txt" "$OUT/new.txt" | tee "$OUT/benchstat.txt"

if [[ ${CALLGRIND:-0} == 1 ]]; then
	command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
	ir() { # ir BINARY BENCH BENCHTIME: instructions of one run
		GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 GOGC=off valgrind --tool=callgrind \
			--callgrind-out-file=/dev/null "$1" -test.run '^$' -test.bench "$2" -test.benchtime "$3" 2>&1 |
			awk '/Collected/ {print $4}'
	}
	# Body benchmarks: 5 ops of 1 MiB; per-header benchmarks: 200,000 probes.
	for spec in 'BenchmarkRewrite/work=clone/engine=stream16k$ 5' 'BenchmarkRewrite/work=literals/engine=stream16k$ 5' \
		'BenchmarkRewrite/work=regexes/engine=stream16k$ 5' 'BenchmarkRewrite/work=regexes/engine=whole$ 5' \
		'BenchmarkMatchCost/work=clone/body=page$ 5' 'BenchmarkMatchCost/work=clone/body=defused$ 5' \
		'BenchmarkHeaderFilterRequest/trie$ 200000' 'BenchmarkHeaderSet/trie/hit=10$ 200000'; do
		read -r b n <<<"$spec"
		o1=$(ir "$OUT/old.test" "$b" 1x) o2=$(ir "$OUT/old.test" "$b" "${n}x")
		n1=$(ir "$OUT/new.test" "$b" 1x) n2=$(ir "$OUT/new.test" "$b" "${n}x")
		awk -v b="$b" -v o=$(((o2 - o1) / n)) -v w=$(((n2 - n1) / n)) \
			'BEGIN { printf "%-52s instructions/op old %11d new %11d  %+.2f%%\n", b, o, w, (w - o) * 100 / o }'
	done | tee "$OUT/callgrind.txt"
fi
echo "results in $OUT" >&2
