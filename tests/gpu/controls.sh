#!/usr/bin/env bash
# tests/gpu/controls.sh - record one kaudit session per control candidate, for the analyzer.
#
#   bash tests/gpu/controls.sh       (from the repository root, on the GPU machine)
#
# Builds kaudit (core only, as tests/gpu/run.sh does) while the controls' shared
# load_inline extension (tests/gpu/controls/kernels.py) builds beside it, outside
# kaudit.  Then, for each line "name task candidate" of tests/gpu/controls/controls.txt:
#
#   kaudit run -d $WORK/sessions/NAME -- python3 tests/gpu/controls/harness.py \
#       --task tests/gpu/controls/tasks/TASK.py \
#       --candidate tests/gpu/controls/candidates/CANDIDATE.py \
#       --decision-file $WORK/sessions/NAME.weak
#
# and `kaudit dump` of the session.  One line per control,
#
#   CONTROL <name> rc=<rc> weak=<ACCEPT|REJECT|?> <seconds>s
#
# then the harness's own lines (reported times, guard changes, its verdict).
# Nothing is judged here: the offline analyzer judges the sessions, and
# tests/gpu/controls/README.md says what each control should show.
#
# Output: every line goes to the console and to $OUT/controls-log.txt ($OUT
# defaults to ./gpu-out).  Also written there:
#   controls-sessions.tar.gz  sessions/: for each control the session directory NAME/,
#                             NAME.weak, NAME.stdout, NAME.stderr, NAME.rc, NAME.command;
#                             index.tsv (name task candidate rc weak seconds), controls.txt
#   controls-details.tar.gz   build logs, `kaudit dump` of each session (dumps/NAME.txt),
#                             the extension's generated sources and build.ninja
# The exit status is non-zero when kaudit did not build, or a control did not run
# or exited non-zero.
#
# Environment:
#   KAUDIT_CONTROLS_ONLY="a b"       run only these controls
#   KAUDIT_CONTROLS_LIST=FILE        the list to run (default tests/gpu/controls/controls.txt;
#                                    tests/gpu/controls/unmarked.txt: the issue-5 harness runs)
#   KAUDIT_CONTROLS_HARNESS_ARGS=".." more harness arguments (--unmarked: KernelBench's way)
#   KAUDIT_CONTROLS_DEADLINE_S=480   start no control after this many seconds
#   KAUDIT_CONTROLS_TIMEOUT_S=180    limit for one control's run (shortened near the deadline)
#   KAUDIT_CONTROLS_ITERS=3          timed candidate iterations per control
#   KAUDIT_CONTROLS_WORK=DIR         work directory (default: a new one under /tmp)
#   PYTHON, CUDA_HOME                tools (default python3, /usr/local/cuda)
set -u
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/controls-log.txt

export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
DEADLINE=${KAUDIT_CONTROLS_DEADLINE_S:-480}
RUN_TIMEOUT=${KAUDIT_CONTROLS_TIMEOUT_S:-180}
ITERS=${KAUDIT_CONTROLS_ITERS:-3}
ONLY=${KAUDIT_CONTROLS_ONLY:-}
export PATH="$CUDA_HOME/bin:$PATH"
# A fallback C compiler for timing_native_interpose, after whatever PATH has.
if [ -d /opt/gcc/bin ]; then export PATH="$PATH:/opt/gcc/bin"; fi

CONTROLS=tests/gpu/controls
LIST=$ROOT/${KAUDIT_CONTROLS_LIST:-$CONTROLS/controls.txt}
read -r -a HARNESS_ARGS <<<"${KAUDIT_CONTROLS_HARNESS_ARGS:-}"
MAX_TAR=15500000        # the device tool brings back files of at most 16 MiB
KAUDIT_OK=0
RAN=0
NOT_RUN=0
NONZERO=0

section() { echo; echo "=== $* ($((SECONDS))s)"; }
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Seconds since a now_ms value, with one decimal.
secs_since() {
    local ms=$(($(now_ms) - $1))
    printf '%d.%d' $((ms / 1000)) $(((ms % 1000) / 100))
}

env_facts() {
    section "environment"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(uname -n)  kernel: $(uname -r)  cpus: $(nproc)"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi -L
        nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu \
            --format=csv,noheader
    else
        echo "nvidia-smi: not found"
    fi
    if command -v nvcc >/dev/null; then nvcc --version | tail -2; else echo "nvcc: not found"; fi
    echo "gcc: $(command -v gcc || echo none)  c++: $(c++ --version 2>/dev/null | head -1)"
    echo "ninja: $(ninja --version 2>/dev/null || echo none)  cmake: $(cmake --version 2>/dev/null | head -1)"
    "$PY" - <<'EOF' 2>&1 || echo "python facts failed"
import sys
print("python", sys.version.split()[0], sys.executable)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda,
          "cudnn", torch.backends.cudnn.version(),
          "device", torch.cuda.get_device_name() if torch.cuda.is_available() else "none")
except Exception as exc:
    print("torch: not importable:", exc)
EOF
    echo "TORCH_EXTENSIONS_DIR=$TORCH_EXTENSIONS_DIR TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST"
}

build_all() {
    section "build"
    local t0=$SECONDS ext_pid rc
    # The shared extension builds meanwhile, bare (outside any recorded run), into
    # the TORCH_EXTENSIONS_DIR every control reuses.
    (
        s=$SECONDS
        cd "$ROOT" || exit 99
        timeout -k 10 300 "$PY" "$CONTROLS/kernels.py" --build
        r=$?
        echo "prebuild: rc=$r, $((SECONDS - s))s"
        exit $r
    ) </dev/null >"$WORK/ext-build.log" 2>&1 &
    ext_pid=$!
    (cd "$ROOT" && cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON &&
        cmake --build build-gpu) </dev/null >"$WORK/kaudit-build.log" 2>&1
    rc=$?
    KAUDIT=$ROOT/build-gpu/bin/kaudit
    if [ $rc -eq 0 ] && [ -x "$KAUDIT" ]; then
        echo "kaudit built in $((SECONDS - t0))s: $("$KAUDIT" --version 2>&1 | head -1)"
        KAUDIT_OK=1
    else
        echo "kaudit did not build (rc=$rc); end of kaudit-build.log:"
        tail -30 "$WORK/kaudit-build.log"
    fi
    if wait "$ext_pid"; then
        echo "extension kaudit_ctrl_kernels built outside kaudit, ready $((SECONDS - t0))s after the builds began"
        grep -E '^(kernels: built|prebuild:)' "$WORK/ext-build.log" | sed 's/^/    /'
    else
        echo "extension kaudit_ctrl_kernels did NOT build outside kaudit (each control that needs it"
        echo "will try again inside its run); end of ext-build.log:"
        tail -25 "$WORK/ext-build.log" | cut -c1-300 | sed 's/^/    /'
    fi
}

# report NAME RC WEAK SECONDS [NOTE]: the one line per control, and the index.
report() {
    echo "CONTROL $1 rc=$2 weak=$3 ${4}s${5:+ ($5)}" | tee -a "$WORK/control-lines.txt"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$TASK" "$CAND" "$2" "$3" "$4" >>"$WORK/sessions/index.tsv"
}

run_control() {
    local name=$1 s=$WORK/sessions
    TASK=$2
    CAND=$3
    local taskf=$CONTROLS/tasks/$TASK.py candf=$CONTROLS/candidates/$CAND.py
    local left=$((DEADLINE - SECONDS)) limit rc t0 weak dump_rc note=""
    if [ ! -f "$ROOT/$taskf" ] || [ ! -f "$ROOT/$candf" ]; then
        NOT_RUN=$((NOT_RUN + 1))
        report "$name" missing "?" 0 "no $taskf or no $candf"
        return 0
    fi
    if [ "$left" -le 0 ]; then
        NOT_RUN=$((NOT_RUN + 1))
        report "$name" skipped "?" 0 "deadline of ${DEADLINE}s passed at ${SECONDS}s"
        return 0
    fi
    limit=$RUN_TIMEOUT
    if [ $((left + 60)) -lt "$limit" ]; then limit=$((left + 60)); fi
    rm -rf "${s:?}/$name"
    rm -f "$s/$name.weak" "$s/$name.stdout" "$s/$name.stderr" "$s/$name.rc"
    local cmd=("$KAUDIT" run -d "$s/$name" -- "$PY" "$CONTROLS/harness.py" --task "$taskf"
        --candidate "$candf" --iters "$ITERS" --decision-file "$s/$name.weak" "${HARNESS_ARGS[@]}")
    printf '%q ' "${cmd[@]}" >"$s/$name.command"
    echo >>"$s/$name.command"

    t0=$(now_ms)
    (cd "$ROOT" && timeout -k 10 "$limit" "${cmd[@]}") </dev/null >"$s/$name.stdout" 2>"$s/$name.stderr"
    rc=$?
    local took
    took=$(secs_since "$t0")
    echo "$rc" >"$s/$name.rc"
    RAN=$((RAN + 1))
    [ "$rc" -eq 0 ] || NONZERO=$((NONZERO + 1))
    weak=$(head -1 "$s/$name.weak" 2>/dev/null | tr -d '[:space:]')
    case "$rc" in 124 | 137) note="killed at the ${limit}s limit" ;; esac
    report "$name" "$rc" "${weak:-?}" "$took" "$note"

    # What the harness and the candidate said, and kaudit's own messages.
    grep -E '^(weak:|harness: (reference_ms|reported_ms|median_ms|guard-changed|waited|copied))' \
        "$s/$name.stdout" | cut -c1-240 | sed 's/^/    /'
    grep -E "^($name|kaudit): " "$s/$name.stderr" | head -8 | cut -c1-300 | sed 's/^/    /'
    if [ "$rc" -ne 0 ]; then
        tail -3 "$s/$name.stdout" | cut -c1-300 | sed 's/^/    stdout: /'
        tail -6 "$s/$name.stderr" | cut -c1-300 | sed 's/^/    stderr: /'
    fi

    if [ -d "$s/$name" ]; then
        timeout -k 5 60 "$KAUDIT" dump "$s/$name" >"$WORK/dumps/$name.txt" 2>&1
        dump_rc=$?
        echo "    session: $(find "$s/$name" -type f | wc -l) files, $(du -sk "$s/$name" | cut -f1) KiB;" \
            "kaudit dump rc=$dump_rc, $(wc -l <"$WORK/dumps/$name.txt") lines"
        echo "    dump: $(grep -E '^  (status|processes|kernels|vendor_calls|health_problems):' \
            "$WORK/dumps/$name.txt" | sed 's/^ *//' | paste -sd';' - | sed 's/;/; /g')"
    else
        echo "    no session directory was written"
    fi
}

run_controls() {
    section "controls"
    local line name task cand rest lines
    mapfile -t lines < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$LIST")
    echo "${#lines[@]} controls in $CONTROLS/controls.txt${ONLY:+; only: $ONLY}; deadline ${DEADLINE}s," \
        "${RUN_TIMEOUT}s per run, $ITERS timed iterations"
    for line in "${lines[@]}"; do
        read -r name task cand rest <<<"$line"
        want "$name" || continue
        echo
        run_control "$name" "$task" "$cand"
    done
}

pack_sessions() {
    section "pack"
    local s=$WORK/sessions tarball=$OUTDIR/controls-sessions.tar.gz
    local list=$WORK/sessions.list sizes=$WORK/sessions.sizes d name size
    cp "$LIST" "$s/controls.txt"
    : >"$sizes"
    for d in "$s"/*/; do
        [ -d "$d" ] || continue
        name=$(basename "$d")
        size=$(tar -C "$s" -czf - "$name" | wc -c)
        printf '%s\t%s\n' "$name" "$size" >>"$sizes"
        echo "session $name: $(find "$d" -type f | wc -l) files, $(du -sk "$d" | cut -f1) KiB on disk," \
            "$size bytes compressed"
    done
    (cd "$WORK" && find sessions -mindepth 1 -maxdepth 1 | sort) >"$list"
    tar -C "$WORK" -czf "$tarball" -T "$list"
    while [ "$(wc -c <"$tarball")" -ge "$MAX_TAR" ]; do
        name=$(sort -t$'\t' -k2,2nr "$sizes" | head -1 | cut -f1)
        [ -n "$name" ] || break
        echo "controls-sessions.tar.gz is over $MAX_TAR bytes: leaving out the session directory" \
            "of $name (its .weak, .stdout, .stderr stay)"
        grep -v -x "sessions/$name" "$list" >"$list.new"
        mv "$list.new" "$list"
        grep -v "^$name"$'\t' "$sizes" >"$sizes.new"
        mv "$sizes.new" "$sizes"
        tar -C "$WORK" -czf "$tarball" -T "$list"
    done
    echo "controls-sessions.tar.gz: $(wc -c <"$tarball") bytes"
}

pack_details() {
    local list=$WORK/details.list
    (cd "$WORK" && {
        find . -maxdepth 1 -type f \( -name '*.log' -o -name 'control-lines.txt' \)
        find dumps -type f
        find torch-extensions -maxdepth 2 -type f \( -name '*.cpp' -o -name '*.cu' \
            -o -name 'build.ninja' \) 2>/dev/null
    } | sort) >"$list"
    tar -C "$WORK" -czf "$OUTDIR/controls-details.tar.gz" -T "$list" 2>/dev/null
    echo "controls-details.tar.gz: $(wc -c <"$OUTDIR/controls-details.tar.gz") bytes"
}

main() {
    cd "$ROOT" || exit 99
    PY=$(command -v "$PY") || { echo "no python: ${PYTHON:-python3}"; return 1; }
    WORK=${KAUDIT_CONTROLS_WORK:-$(mktemp -d /tmp/kaudit-controls.XXXXXX)}
    mkdir -p "$WORK/sessions" "$WORK/dumps"
    WORK=$(cd "$WORK" && pwd)
    : >"$WORK/control-lines.txt"
    printf 'name\ttask\tcandidate\trc\tweak\tseconds\n' >"$WORK/sessions/index.tsv"
    export TORCH_EXTENSIONS_DIR=$WORK/torch-extensions
    export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
    export PYTHONDONTWRITEBYTECODE=1
    export PYTHONUNBUFFERED=1
    echo "kaudit controls: repo $ROOT, work $WORK, results in $OUTDIR"

    env_facts
    build_all
    if [ "$KAUDIT_OK" = 1 ]; then
        run_controls
    else
        echo "controls: not run, kaudit did not build"
    fi
    pack_sessions
    pack_details

    section "summary"
    cat "$WORK/control-lines.txt"
    echo "elapsed ${SECONDS}s; controls-log.txt, controls-sessions.tar.gz, controls-details.tar.gz in $OUTDIR"
    echo "controls: $RAN recorded, $NOT_RUN not run, $NONZERO exited non-zero"
    [ "$KAUDIT_OK" = 1 ] && [ "$NOT_RUN" -eq 0 ] && [ "$NONZERO" -eq 0 ]
}

main "$@" 2>&1 | tee "$LOG"
exit "${PIPESTATUS[0]}"
