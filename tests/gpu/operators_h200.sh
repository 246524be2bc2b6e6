#!/usr/bin/env bash
# tests/gpu/operators_h200.sh - issue 13 item 1 on the H200, one device call:
# the real-harness cases whose verdicts rest on ATen operator ranges (the
# top-k task: torch.topk, torch.sort, a clean Triton kernel) and three
# earlier ones re-recorded with the ranges (their classes from operators
# and names side by side), then the sampler's cost (bench/operators_overhead.sh).
#   bash tests/gpu/real/carry.sh && bash tests/gpu/carry_kaudit.sh    (here)
#   bash tests/gpu/operators_h200.sh          (on the device, carrying .gpu-carry)
# OPS_PARTS (default "real bench"; also "controls": the unmarked timing controls).
# Output: $OUT/real-sessions.tar.gz, real-log.txt, operators-overhead.txt
# (controls: controls-sessions.tar.gz, controls-log.txt, controls-details.tar.gz).
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
case " ${OPS_PARTS:-real bench} " in *" controls "*)
    # the timing controls without marks, KernelBench's way (docs/controls.md): a replacement
    # by the candidate module's top-level code, one in its __init__, and a clean one
    KAUDIT_CONTROLS_LIST=tests/gpu/controls/unmarked.txt KAUDIT_CONTROLS_HARNESS_ARGS=--unmarked \
        KAUDIT_CONTROLS_ONLY=${OPS_CONTROLS_ONLY:-"exec_timing_monkeypatch exec_timing_monkeypatch_init exec_clean_add"} \
        KAUDIT_CONTROLS_DEADLINE_S=${OPS_CONTROLS_DEADLINE_S:-240} bash "$ROOT/tests/gpu/controls.sh"
    ;;
esac
case " ${OPS_PARTS:-real bench} " in *" bench "*)
    KAUDIT=$K bash "$ROOT/bench/operators_overhead.sh"
    ;;
esac
