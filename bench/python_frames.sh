#!/usr/bin/env bash
# bench/python_frames.sh - the cost of Python-side provenance per watched frame
# (issue 5, item 4), measured as interleaved pairs: bench/python_frames.py
# under `kaudit run` with provenance on (the default) and off (--no-python).
#
#   bash bench/python_frames.sh [KAUDIT] [PAIRS] [CALLS]
#
# Prints each run and the medians; the difference of the watched medians is
# what one watched call costs (a push and a pop record), the difference of the
# unwatched medians what provenance costs code it does not watch.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KAUDIT=${1:-$ROOT/build/bin/kaudit}
PAIRS=${2:-5}
CALLS=${3:-100000}
PY=${PYTHON:-python3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
on_w=() on_u=() off_w=() off_u=()
for ((i = 0; i < PAIRS; i++)); do
    for mode in on off; do
        flag=()
        [ "$mode" = off ] && flag=(--no-python)
        line=$("$KAUDIT" run "${flag[@]}" -d "$W/s-$i-$mode" -- "$PY" "$ROOT/bench/python_frames.py" "$CALLS")
        echo "$mode: $line"
        w=$(sed -n 's/.* watched \([0-9.]*\) ns.*/\1/p' <<<"$line")
        u=$(sed -n 's/.* unwatched \([0-9.]*\) ns.*/\1/p' <<<"$line")
        if [ "$mode" = on ]; then on_w+=("$w"); on_u+=("$u"); else off_w+=("$w"); off_u+=("$u"); fi
        rm -rf "$W/s-$i-$mode"
    done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mw=$(median "${on_w[@]}") mu=$(median "${on_u[@]}") fw=$(median "${off_w[@]}") fu=$(median "${off_u[@]}")
echo "median ns/call: watched on $mw off $fw; unwatched on $mu off $fu"
awk -v a="$mw" -v b="$fw" -v c="$mu" -v d="$fu" 'BEGIN {
    printf "provenance costs %.0f ns per watched call and %.1f ns per unwatched call\n", a - b, c - d }'
