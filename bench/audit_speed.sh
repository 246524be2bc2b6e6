#!/usr/bin/env bash
# bench/audit_speed.sh - the speed of `kaudit audit` on the H200 (docs/audit.md,
# "Speed"): a batch of real KernelBench level-1/2 tasks (every 6th level-1 and
# every 12th level-2 task of the pinned commit, .gpu-carry/KernelBench from
# tests/gpu/real/carry.sh), each with a candidate that hands the work back to
# the reference's PyTorch code (no build), --jobs AUDIT_JOBS (3) at a time;
# then the honest own-kernel candidate with a fresh and a warm extension
# directory (the cold and warm build figures).  Prints p50/p95 of the
# per-pair wall time (the paper's quantile rule: index floor(n q)).
# Needs the full kaudit carried in .gpu-carry/kaudit (tests/gpu/carry_kaudit.sh).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AUDIT_PARTS="honest batch" exec bash "$ROOT/tests/gpu/audit_h200.sh"
