#!/usr/bin/env bash
# apply-ratio.sh: `streamsub apply` against Go's regexp on the same rules,
# interleaved in one run (see internal/goregexp/cmd/applyratio): builds
# streamsub, regexpapply and the generated page with its config into WORK,
# then runs the rounds. About ROUNDS × 25 s on a 64 MiB page.
#
# Environment: SIZE (67108864), WORKLOAD (clone), ROUNDS (5), RUNS (6
# streamsub runs per round), WORK (a new temp dir), STREAMSUB_BIN (default:
# built from this tree), GO (go).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-67108864}
WORKLOAD=${WORKLOAD:-clone}
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-6}
GO=${GO:-go}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/streamsub-ratio.XXXXXX")}
mkdir -p "$WORK"

cd "$ROOT"
BIN=${STREAMSUB_BIN:-}
if [[ -z $BIN ]]; then
	BIN=$WORK/streamsub
	"$GO" build -o "$BIN" ./cmd/streamsub
fi
"$GO" build -o "$WORK/regexpapply" ./internal/goregexp/cmd/regexpapply
"$GO" build -o "$WORK/applyratio" ./internal/goregexp/cmd/applyratio
page=$WORK/page-$WORKLOAD-$SIZE.html
if [[ ! -s $page ]]; then
	"$GO" run ./internal/htmlgen/cmd/genpage -size "$SIZE" -seed 1 -workload "$WORKLOAD" \
		-o "$page" -config "$WORK/$WORKLOAD.yaml"
fi
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
"$WORK/applyratio" -streamsub "$BIN" -regexpapply "$WORK/regexpapply" \
	-config "$WORK/$WORKLOAD.yaml" -workload "$WORKLOAD" -page "$page" \
	-rounds "$ROUNDS" -runs "$RUNS" -dir "$WORK"
