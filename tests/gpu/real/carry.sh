#!/usr/bin/env bash
# tests/gpu/real/carry.sh - export the two pinned evaluators from the fetch
# tool's mirrors into .gpu-carry/ (ignored), for tests/gpu/real_harness.sh.
# Only what the evaluators import and the level-1 tasks travel.
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
MIRROR=${KAUDIT_MIRROR:-/work/.mirror}
KB_COMMIT=423217d9fda91e0c2d67e4a43bf62f96f6d104f1
CL1_COMMIT=51e8356bf844101cab2aeeca4bdff47ebb1953b8
rm -rf "$ROOT/.gpu-carry/KernelBench" "$ROOT/.gpu-carry/CUDA-L1"
mkdir -p "$ROOT/.gpu-carry/KernelBench" "$ROOT/.gpu-carry/CUDA-L1"
git -C "$MIRROR/ScalingIntelligence+KernelBench/repo" archive "$KB_COMMIT" src KernelBench/level1 KernelBench/level2 |
    tar -x -C "$ROOT/.gpu-carry/KernelBench"
git -C "$MIRROR/deepreinforce-ai+CUDA-L1/repo" archive "$CL1_COMMIT" eval | tar -x -C "$ROOT/.gpu-carry/CUDA-L1"
du -sh "$ROOT/.gpu-carry/KernelBench" "$ROOT/.gpu-carry/CUDA-L1"
