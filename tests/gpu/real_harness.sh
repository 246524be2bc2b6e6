#!/usr/bin/env bash
# tests/gpu/real_harness.sh - record two public evaluators, unmodified, under
# kaudit run on the GPU machine: KernelBench's eval_kernel_against_ref and
# CUDA-L1's eval_pipeline, on candidates for each class of issue 13
# (tests/gpu/real/candidates/, ours) and KernelBench's three adversarial
# fixtures (from its own repository).  docs/controls.md, "Real harnesses".
#
# The harnesses are not part of this repository.  Recipe (here, before the
# device call; .gpu-carry/ is ignored):
#   fetch github:ScalingIntelligence/KernelBench   at 423217d9fda91e0c2d67e4a43bf62f96f6d104f1
#   fetch github:deepreinforce-ai/CUDA-L1          at 51e8356bf844101cab2aeeca4bdff47ebb1953b8
#   bash tests/gpu/real/carry.sh    (exports src/, KernelBench/level1 and eval/ into .gpu-carry/)
# then on the device, carrying .gpu-carry:
#   bash tests/gpu/real_harness.sh      ($OUT/real-sessions.tar.gz, $OUT/real-log.txt)
#
# REAL_ONLY="name ..." picks cases; REAL_DEADLINE_S (default 420) stops
# starting new cases after that many seconds (the first run of all eleven
# took 490 s before the last case, cl1_mul_inline, and its cold load_inline
# build ran into the 600 s limit of a device call).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
KB=$ROOT/.gpu-carry/KernelBench
CL1=$ROOT/.gpu-carry/CUDA-L1
REAL=$ROOT/tests/gpu/real
W=$(mktemp -d /tmp/kaudit-real.XXXXXX)
LOG=$OUTDIR/real-log.txt
DEADLINE=${REAL_DEADLINE_S:-420}
start=$SECONDS
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }

KAUDIT=${REAL_KAUDIT:-$ROOT/build-gpu/bin/kaudit}   # REAL_KAUDIT: a carried build instead
if [ -z "${REAL_KAUDIT:-}" ] && [ ! -x "$ROOT/build-gpu/bin/kaudit" ]; then
    (cd "$ROOT" && cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON && cmake --build build-gpu) \
        >"$W/kaudit-build.log" 2>&1 || { say "REAL build failed"; tail -20 "$W/kaudit-build.log"; exit 1; }
fi
for d in "$KB/src/kernelbench" "$KB/KernelBench/level1" "$CL1/eval"; do
    [ -d "$d" ] || { say "REAL missing $d (run tests/gpu/real/carry.sh here first)"; exit 1; }
done
FIX=$KB/src/kernelbench/unit_tests/test_kernels
L1=$KB/KernelBench/level1

# name  harness  reference  candidate  backend  [build folder: KernelBench's
# build_dir, under $W/build/; a second case naming the same folder finds the
# first one's build there, warm]
cases="
kb_mul_torch kb $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/kb_mul_torch.py cuda
kb_mul_triton kb $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/kb_mul_triton.py triton
kb_maxpool3d_torch kb $L1/43_Max_Pooling_3D.py $REAL/candidates/kb_maxpool3d_torch.py cuda
kb_maxpool3d_triton kb $L1/43_Max_Pooling_3D.py $REAL/candidates/kb_maxpool3d_triton.py triton
kb_prod_torch kb $REAL/tasks/prod_reduction.py $REAL/candidates/kb_prod_torch.py cuda
kb_prod_triton kb $REAL/tasks/prod_reduction.py $REAL/candidates/kb_prod_triton.py triton
cl1_matmul_torch cl1 $L1/1_Square_matrix_multiplication_.py $REAL/candidates/cl1_matmul_torch.py -
kb_zero_out kb $L1/1_Square_matrix_multiplication_.py $FIX/zero_out_kernel.py cuda
kb_non_default_stream kb $L1/1_Square_matrix_multiplication_.py $FIX/non_default_stream_kernel.py cuda
kb_result_reuse kb $L1/1_Square_matrix_multiplication_.py $FIX/result_reuse_kernel.py cuda
cl1_mul_inline cl1 $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/cl1_mul_inline.py -
kb_topk_torch kb $REAL/tasks/topk_values.py $REAL/candidates/kb_topk_torch.py cuda
kb_sort_torch kb $REAL/tasks/topk_values.py $REAL/candidates/kb_sort_torch.py cuda
kb_topk_triton kb $REAL/tasks/topk_values.py $REAL/candidates/kb_topk_triton.py triton
kbd_mul_inline kb $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/kb_mul_inline_builddir.py cuda mul
kbd_mul_inline_warm kb $L1/5_Matrix_scalar_multiplication.py $REAL/candidates/kb_mul_inline_builddir.py cuda mul
kbd_matmul_tiled kb $L1/1_Square_matrix_multiplication_.py $REAL/candidates/kb_matmul_inline_tiled.py cuda tiled
kbd_matmul_atmatmul kb $L1/1_Square_matrix_multiplication_.py $REAL/candidates/kb_matmul_inline_atmatmul.py cuda atmatmul
kbd_matmul_unused kb $L1/1_Square_matrix_multiplication_.py $REAL/candidates/kb_matmul_inline_unused.py cuda unused
"
echo "$cases" | while read -r name harness ref cand backend bd; do
    [ -n "$name" ] || continue
    case " ${REAL_ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
    if [ $((SECONDS - start)) -ge "$DEADLINE" ]; then say "CASE $name not run (deadline)"; continue; fi
    d=$W/sessions/$name
    mkdir -p "$d"
    if [ "$harness" = kb ]; then
        set -- python3 "$REAL/kernelbench_eval.py" "$KB" "$ref" "$cand" --backend "$backend" --perf-trials 10 --correct-trials 3
        shown=""
        if [ -n "$bd" ]; then
            mkdir -p "$W/build/$bd"
            set -- "$@" --build-dir "$W/build/$bd"
            shown=" --build-dir build/$bd"
        fi
        echo "kaudit run -d session -- python3 tests/gpu/real/kernelbench_eval.py KernelBench $(basename "$ref") $(basename "$cand") --backend $backend --perf-trials 10 --correct-trials 3$shown" >"$d/command.txt"
    else
        set -- python3 "$REAL/cudal1_eval.py" "$CL1" "$ref" "$cand" "$d/cudal1-log.json"
        echo "kaudit run -d session -- python3 tests/gpu/real/cudal1_eval.py CUDA-L1 $(basename "$ref") $(basename "$cand") log.json" >"$d/command.txt"
    fi
    t0=$SECONDS
    left=$((DEADLINE + 150 - (SECONDS - start)))
    timeout "$left" "$KAUDIT" run -d "$d/session" -- "$@" >"$d/stdout.txt" 2>"$d/stderr.txt"
    rc=$?
    weak=$(sed -n 's/^WEAK //p' "$d/stdout.txt" | tail -1)
    echo "${weak:-NONE}" >"$d/weak.txt"
    # packed after every case, so that a call stopped at its limit keeps what was recorded
    tar -C "$W" -czf "$OUTDIR/real-sessions.tar.gz" sessions
    say "CASE $name rc=$rc weak=${weak:-NONE} $((SECONDS - t0))s kernels=$(sed -n 's/^kernels: //p' "$d/session/info" | tail -1) size=$(du -sk "$d/session" | cut -f1)K"
done
say "REAL done in $((SECONDS - start)) s"
