#!/bin/sh
# tests/audit_timing_turns.sh - concurrent audits take turns on their device
# (docs/timing.md, "Concurrent audits"): a timed phase waits while another
# audit works on the device, an audit's work waits while another's timed phase
# runs, the waits are recorded, and a phase that never had its turn (the wait
# bounded by --timeout / 4) is timed anyway with its speedup withheld.  CPU
# audits with --timing on: the device is "cpu".  Another audit is played by a
# small Python holding the same locks.
NAME=audit_timing_turns
. "$(dirname "$0")/audit_env.sh"
T=$(mktemp -d)
trap 'kill $holder 2>/dev/null; rm -rf "$T"' EXIT
fails=0
check() { # WHAT COMMAND...
    _what=$1; shift
    if "$@"; then echo "ok: $_what"; else echo "FAIL: $_what"; fails=$((fails + 1)); fi
}
export KAUDIT_TIMING_LOCK_DIR="$T/locks"
REF=$SRC/tests/audit/tasks/rowsum.py CAND=$SRC/tests/audit/candidates/reordered_reduction.py
hold() { # sh|ex EVENTS EVENT SECONDS: hold the cpu lock as another audit would (sh: working on
          # the device; ex: in a timed phase, with its gate) until EVENTS shows EVENT, then SECONDS more
    "$PY" -c 'import fcntl, json, os, sys, time
d, mode, events, event, more = sys.argv[1:6]
os.makedirs(d, exist_ok=True)
fds = [os.open(os.path.join(d, "cpu." + f), os.O_RDWR | os.O_CREAT, 0o644) for f in ("gate", "lock")]
for fd in (fds if mode == "ex" else fds[1:]):
    fcntl.flock(fd, fcntl.LOCK_EX if mode == "ex" else fcntl.LOCK_SH)
open(os.path.join(d, "holding"), "w").close()
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    try:
        if any(json.loads(x).get("event") == event for x in open(events) if x.endswith("\n")):
            break
    except OSError:
        pass
    time.sleep(0.02)
time.sleep(float(more))' "$KAUDIT_TIMING_LOCK_DIR" "$@" &
    holder=$!
    _n=0
    while [ ! -e "$KAUDIT_TIMING_LOCK_DIR/holding" ]; do
        kill -0 "$holder" 2>/dev/null && [ "$_n" -lt 600 ] || { echo "FAIL: the holder did not start"; exit 1; }
        sleep 0.05; _n=$((_n + 1))
    done
    rm -f "$KAUDIT_TIMING_LOCK_DIR/holding"
}
audit() { # NAME [OPTIONS]: one audit with timing on the CPU into $T/NAME
    _n=$1; shift
    "$K" audit --reference "$REF" --candidate "$CAND" --device cpu --timing on --probe off -d "$T/$_n" --quiet "$@"
}

# 1. No other audit: both phases held at once, no wait to share.
audit free
R=$T/free/record.json
check "free: two turns, both held" [ "$(jget "$R" "[t['status'] for t in r['timing']['turns']]")" = '["held", "held"]' ]
check "free: device cpu" [ "$(jget "$R" "r['timing']['turns'][0]['device']")" = cpu ]
check "free: the lock files were made" [ -f "$KAUDIT_TIMING_LOCK_DIR/cpu.lock" ] && [ -f "$KAUDIT_TIMING_LOCK_DIR/cpu.gate" ]

# 2. Another audit works on the device (shared) until 2 s after this one
#    adopted its candidate's process (event party, just before the
#    reference's timed phase): the reference's timed phase waits for it.
hold sh "$T/waits/runner/events.jsonl" party 2
audit waits
wait $holder
R=$T/waits/record.json
check "waits: both held" [ "$(jget "$R" "[t['status'] for t in r['timing']['turns']]")" = '["held", "held"]' ]
check "waits: the reference's timed phase waited >= 0.5 s" [ "$(jget "$R" "r['timing']['turns'][0]['waited_s'] >= 0.5")" = True ]
check "waits: the A/A screen ran after the wait" [ "$(jget "$R" "r['timing']['aa'] is not None")" = True ]

# 3. Another audit is in its timed phase until 2 s after this one started:
#    this one's work on the device waits for it (event device_share).
hold ex "$T/yields/runner/events.jsonl" start 2
audit yields
wait $holder
E=$T/yields/runner/events.jsonl
share=$("$PY" -c 'import json, sys
print([json.loads(l).get("waited_s") for l in open(sys.argv[1]) if "\"device_share\"" in l])' "$E")
check "yields: it waited >= 1 s to share the device ($share)" "$PY" -c "import sys; v = $share; sys.exit(not (len(v) == 1 and v[0] >= 1))"
check "yields: both timed phases held" [ "$(jget "$T/yields/record.json" "[t['status'] for t in r['timing']['turns']]")" = '["held", "held"]' ]

# 3b. Another audit shares the device for the whole audit and never pauses,
#     KAUDIT_TIMING_LOCK_WAIT_S=2: timed anyway, not-held, speedup withheld.
hold sh "$T/never/runner/events.jsonl" never-logged 60
KAUDIT_TIMING_LOCK_WAIT_S=2 audit never
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

# 3d. A process holds the gate and the device for ever (a candidate of another
#     audit can flock them too): this audit waits once, within the bound, then
#     goes on without sharing (later tries do not wait), and ends well inside
#     its time limit.
hold ex "$T/hostile/runner/events.jsonl" never-logged 120
KAUDIT_TIMING_LOCK_WAIT_S=2 audit hostile --timeout 60
kill $holder 2>/dev/null
E=$T/hostile/runner/events.jsonl
share=$("$PY" -c 'import json, sys
print([(e["share_timeouts"], e["waited_s"]) for e in map(json.loads, open(sys.argv[1])) if e["event"] == "device_share"])' "$E")
check "hostile: one bounded wait to share, then none ($share)" "$PY" -c "import sys; v = $share; sys.exit(not (len(v) == 1 and v[0][0] >= 1 and 1.9 <= v[0][1] < 4))"
R=$T/hostile/record.json
check "hostile: not stopped at the time limit" [ "$(jget "$R" "r['worker']['timed_out']")" = False ]
check "hostile: both timed phases not-held" [ "$(jget "$R" "[t['status'] for t in r['timing']['turns']]")" = '["not-held", "not-held"]' ]

# 3c. A link planted where the lock file goes (another user of the shared
#     directory): not followed; the turns fail, the speedup is withheld.
L=$T/planted
mkdir -p "$L"
ln -s "$T/victim" "$L/cpu.lock"
KAUDIT_TIMING_LOCK_DIR=$L audit planted
R=$T/planted/record.json
check "planted: both turns in error" [ "$(jget "$R" "[t['status'] for t in r['timing']['turns']]")" = '["error", "error"]' ]
check "planted: the link was not followed" [ ! -e "$T/victim" ]
check "planted: speedup not reportable" [ "$(jget "$R" "r['timing']['speedup']['reportable']")" = False ]

# 3e. A candidate that, from native code, tries to remove the lock file and
#     to write into it: under Landlock the lock directory lets the worker make
#     files only (create_roots), so both fail and the file stays the same.
# (in a folder of its own, the honest candidate's code copied beside it: the
# candidate's process reads only its own folder, and not one above the audit's)
mkdir "$T/unlinker-candidate"
cp "$CAND" "$T/unlinker-candidate/honest_rowsum.py"
cat >"$T/unlinker-candidate/unlinker.py" <<PYEOF
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_lock = os.path.join(os.environ["KAUDIT_TIMING_LOCK_DIR"], "cpu.lock").encode()
_libc.unlink(_lock)
_fd = _libc.open(_lock, 1)  # O_WRONLY
if _fd >= 0:
    _libc.write(_fd, b"x", 1)
exec(open("$T/unlinker-candidate/honest_rowsum.py").read())
PYEOF
before=$(stat -c %i "$KAUDIT_TIMING_LOCK_DIR/cpu.lock")
"$K" audit --reference "$REF" --candidate "$T/unlinker-candidate/unlinker.py" --device cpu --timing on --probe off -d "$T/unlinker" --quiet
R=$T/unlinker/record.json
check "unlinker: the lock directory is a create-only root" [ "$(jget "$R" "r['confinement']['create_roots'] == ['$KAUDIT_TIMING_LOCK_DIR'] and '$KAUDIT_TIMING_LOCK_DIR' not in r['confinement']['write_roots']")" = True ]
if [ "$(jget "$R" "r['confinement']['mechanism']")" = landlock ]; then
    check "unlinker: the lock file is the same file" [ "$(stat -c %i "$KAUDIT_TIMING_LOCK_DIR/cpu.lock")" = "$before" ]
    check "unlinker: nothing was written into it" [ ! -s "$KAUDIT_TIMING_LOCK_DIR/cpu.lock" ]
    check "unlinker: both turns held" [ "$(jget "$R" "[t['status'] for t in r['timing']['turns']]")" = '["held", "held"]' ]
else
    echo "(no Landlock here: the lock file's protection is not checked)"
fi

# 4. KAUDIT_TIMING_LOCK_DIR=none: no turns taken, none recorded.
KAUDIT_TIMING_LOCK_DIR=none audit none
check "none: no turns" [ "$(jget "$T/none/record.json" "r['timing']['turns']")" = '[]' ]

[ "$fails" = 0 ] && echo "PASS" || { echo "$fails failed"; exit 1; }
