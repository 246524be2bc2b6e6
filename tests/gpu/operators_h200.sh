#!/usr/bin/env bash
# tests/gpu/operators_h200.sh - issue 13 item 1 on the H200, one device call:
# the real-harness cases whose verdicts rest on ATen operator ranges (the
# top-k task: torch.topk, torch.sort, a clean Triton kernel) and three
# earlier ones re-recorded with the ranges (their classes from operators
# and names side by side), then the sampler's cost (bench/operators_overhead.sh).
#   bash tests/gpu/real/carry.sh && bash tests/gpu/carry_kaudit.sh    (here)
#   bash tests/gpu/operators_h200.sh          (on the device, carrying .gpu-carry)
# Output: $OUT/real-sessions.tar.gz, real-log.txt, operators-overhead.txt.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
K=$ROOT/.gpu-carry/kaudit/bin/kaudit
case " ${OPS_PARTS:-real bench} " in *" real "*)
    REAL_KAUDIT=$K REAL_DEADLINE_S=${OPS_REAL_DEADLINE_S:-330} \
        REAL_ONLY=${OPS_REAL_ONLY:-"kb_topk_torch kb_sort_torch kb_topk_triton kb_prod_torch kb_maxpool3d_torch kb_mul_torch"} \
        bash "$ROOT/tests/gpu/real_harness.sh"
    ;;
esac
case " ${OPS_PARTS:-real bench} " in *" bench "*)
    KAUDIT=$K bash "$ROOT/bench/operators_overhead.sh"
    ;;
esac
