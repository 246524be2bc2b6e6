#!/usr/bin/env bash
# tests/gpu/integrity_h200.sh - the evidence-integrity path (issue 14) on the
# H200, in one device call, with the full kaudit carried in .gpu-carry/kaudit
# (tests/gpu/carry_kaudit.sh):
#   1. how soon after exec a process can do GPU work (bench/cuda_start_probe.c),
#      bare and under kaudit run: the census's 50 ms window against it;
#   2. the attack the census exists for, on a real GPU: a process started
#      with a raw clone and execve with no preload in its environment runs a
#      cuBLAS SGEMM; kaudit must list it untraced and analyze must say
#      INCONCLUSIVE (process-without-trace);
#   3. kaudit audit's honest candidate and the sixteen controls on the new
#      record path (tests/gpu/audit_h200.sh, AUDIT_PARTS, default "honest controls").
# Results: $OUT/integrity-log.txt, $OUT/integrity-sessions.tar.gz and what
# audit_h200.sh writes.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
PY=${KAUDIT_PYTHON:-python3}
W=$(mktemp -d /tmp/kaudit-integrity.XXXXXX)
LOG=$OUTDIR/integrity-log.txt
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }

CU13=$("$PY" -c 'import os, nvidia.cu13 as m; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
CUBLAS=$CU13/libcublas.so.13
say "kaudit: $("$K" version | head -1); cuBLAS: $CUBLAS; kernel $(uname -r)"
gcc -O2 -o "$W/probe" "$ROOT/bench/cuda_start_probe.c" -ldl 2>>"$LOG" || { say "probe build failed"; exit 1; }

# 1. the shortest life of a GPU process
for i in 1 2 3 4 5 6 7 8 9 10; do
    say "bare $i: $(LD_LIBRARY_PATH=$CU13 "$W/probe" "$(date +%s%N)" "$CUBLAS" 2>&1)"
done
for i in 1 2 3 4 5; do
    say "kaudit $i: $(LD_LIBRARY_PATH=$CU13 "$K" run -d "$W/probe-$i" -- "$W/probe" "$(date +%s%N)" "$CUBLAS" 2>&1 | grep -v '^kaudit:')"
done
say "kaudit 1 info: $(grep -E '^(processes|kernels|vendor_calls|session_protection|untraced_processes|rejected_traces):' "$W/probe-1/info" | tr '\n' ' ')"

# 2. GPU work in a process without the preload, behind a raw clone
cat >"$W/raw_clone.py" <<'EOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
probe, cublas, libdir = sys.argv[1:4]
stamp = str(time.time_ns()).encode()
pid = libc.syscall(56, ctypes.c_ulong(17), None, None, None, ctypes.c_ulong(0))  # clone(SIGCHLD)
if pid == 0:
    argv = (ctypes.c_char_p * 4)(probe.encode(), stamp, cublas.encode(), None)
    envp = (ctypes.c_char_p * 2)(b"LD_LIBRARY_PATH=" + libdir.encode(), None)
    libc.syscall(59, probe.encode(), argv, envp)  # execve
    os._exit(127)
os.waitpid(pid, 0)
EOF
"$K" run -d "$W/raw" -- "$PY" "$W/raw_clone.py" "$W/probe" "$CUBLAS" "$CU13" >"$W/raw.out" 2>"$W/raw.err"
say "raw clone: rc=$? probe said: $(cat "$W/raw.out")"
say "raw clone: info: $(grep -E '^(processes|kernels|vendor_calls|untraced_processes|static_processes):' "$W/raw/info" | tr '\n' ' ')"
"$K" analyze "$W/raw" --contract "$ROOT/contracts/examples/torch-ops.json" --json >"$W/raw-analysis.json" 2>"$W/raw-analysis.err"
rc=$?
say "raw clone: analyze exit $rc (11 = INCONCLUSIVE); process-without-trace: $(grep -c process-without-trace "$W/raw-analysis.json")"
tar -C "$W" -czf "$OUTDIR/integrity-sessions.tar.gz" probe-1 raw raw-analysis.json 2>>"$LOG"

# 3. kaudit audit on the new record path
AUDIT_PARTS=${AUDIT_PARTS:-"honest controls"} KAUDIT="$K" bash "$ROOT/tests/gpu/audit_h200.sh"
say "integrity done"
