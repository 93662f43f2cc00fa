#!/usr/bin/env bash
# peak-rss.sh PID STOPFILE: prints the largest resident set (VmRSS, KiB) of
# process PID seen, sampling every 0.2 s, until STOPFILE exists or PID ends.
# scripts/load.sh and scripts/ab.sh run it in the background around a wrk run.
set -euo pipefail
m=0
while [[ ! -e $2 ]] && kill -0 "$1" 2>/dev/null; do
	r=$(awk '/^VmRSS/ { print $2 }' /proc/"$1"/status 2>/dev/null || echo 0)
	((${r:-0} > m)) && m=$r
	sleep 0.2
done
echo "$m"
