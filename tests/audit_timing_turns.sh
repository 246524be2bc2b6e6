#!/bin/sh
# tests/audit_timing_turns.sh - concurrent audits' timed phases take turns on
# their device (docs/timing.md, "Concurrent audits"): a phase waits while
# another process holds the device's lock, its wait is recorded, and a phase
# that never had its turn (the wait bounded by --timeout / 4) is timed anyway
# with its speedup withheld.  CPU audits with --timing on: the device is "cpu".
NAME=audit_timing_turns
. "$(dirname "$0")/audit_env.sh"
T=$(mktemp -d)
trap 'kill $holder 2>/dev/null; rm -rf "$T"' EXIT
fails=0
check() { # WHAT COMMAND...
    _what=$1; shift
    if "$@"; then echo "ok: $_what"; else echo "FAIL: $_what"; fails=$((fails + 1)); fi
}
jget() {
    "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    v = eval(sys.argv[2], {"r": r})
except Exception as e:
    v = "<error: %s>" % e
print("" if v is None else (json.dumps(v) if isinstance(v, (dict, list)) else v))
PYEOF
}
export KAUDIT_TIMING_LOCK_DIR="$T/locks"
REF=$SRC/tests/audit/tasks/rowsum.py CAND=$SRC/tests/audit/candidates/reordered_reduction.py
hold() { # SECONDS: hold the cpu lock as another audit would, from now on
    "$PY" -c 'import fcntl, os, sys, time
os.makedirs(sys.argv[1], exist_ok=True)
fd = os.open(os.path.join(sys.argv[1], "cpu.lock"), os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[1] + "/holding", "w").close()
time.sleep(float(sys.argv[2]))' "$KAUDIT_TIMING_LOCK_DIR" "$1" &
    holder=$!
    while [ ! -e "$KAUDIT_TIMING_LOCK_DIR/holding" ]; do sleep 0.05; done
    rm -f "$KAUDIT_TIMING_LOCK_DIR/holding"
}

# 1. No other audit: both phases held at once.
"$K" audit --reference "$REF" --candidate "$CAND" --device cpu --timing on --probe off -d "$T/free" --quiet
R=$T/free/record.json
check "free: two turns, both held" [ "$(jget "$R" "[t['status'] for t in r['timing']['turns']]")" = '["held", "held"]' ]
check "free: device cpu" [ "$(jget "$R" "r['timing']['turns'][0]['device']")" = cpu ]
check "free: the lock directory was made" [ -f "$KAUDIT_TIMING_LOCK_DIR/cpu.lock" ]

# 2. Another holder for the first 6 s (the audit reaches its timing sooner):
#    the reference phase waits, then holds; the wait is recorded.
hold 6
"$K" audit --reference "$REF" --candidate "$CAND" --device cpu --timing on --probe off -d "$T/wait" --quiet
wait $holder
R=$T/wait/record.json
check "waited: both held" [ "$(jget "$R" "[t['status'] for t in r['timing']['turns']]")" = '["held", "held"]' ]
check "waited: the reference phase waited >= 0.5 s" [ "$(jget "$R" "r['timing']['turns'][0]['waited_s'] >= 0.5")" = True ]
check "waited: the A/A screen ran after the wait" [ "$(jget "$R" "r['timing']['aa'] is not None")" = True ]

# 3. A holder for the whole audit, --timeout 8 (wait bound 2 s): timed anyway,
#    not-held, the speedup withheld with the reason.
hold 60
"$K" audit --reference "$REF" --candidate "$CAND" --device cpu --timing on --probe off -d "$T/never" --quiet --timeout 8
kill $holder 2>/dev/null
R=$T/never/record.json
check "never: both not-held" [ "$(jget "$R" "[t['status'] for t in r['timing']['turns']]")" = '["not-held", "not-held"]' ]
check "never: waited the bound (2 s)" [ "$(jget "$R" "1.9 <= r['timing']['turns'][0]['waited_s'] < 4")" = True ]
check "never: speedup not reportable" [ "$(jget "$R" "r['timing']['speedup']['reportable']")" = False ]
why=$(jget "$R" "r['timing']['speedup']['why_not']")
case "$why" in
*"timed without its turn on cpu"*) echo "ok: never: why_not: $why" ;;
*) echo "FAIL: never: why_not: $why"; fails=$((fails + 1)) ;;
esac

# 4. KAUDIT_TIMING_LOCK_DIR=none: no turns taken, none recorded.
KAUDIT_TIMING_LOCK_DIR=none "$K" audit --reference "$REF" --candidate "$CAND" --device cpu --timing on --probe off \
    -d "$T/none" --quiet
check "none: no turns" [ "$(jget "$T/none/record.json" "r['timing']['turns']")" = '[]' ]

[ "$fails" = 0 ] && echo "PASS" || { echo "$fails failed"; exit 1; }
