#!/usr/bin/env bash
# bench/corpus/carry.sh - export the public corpus that bench/corpus_h200.sh
# audits from the fetch tool's mirror into .gpu-carry/leaderboard (ignored):
# the KernelBench leaderboard (github:anneouyang/KernelBenchLeaderboard) at a
# pinned commit, only the solutions that a list names (default
# bench/corpus/leaderboard-24.tsv) and the problems they were written for.
# Their code never enters this repository: the list holds the solutions'
# file names (the leaderboard's own ids) and the recipe below.
#
# The list (leaderboard-24.tsv) was drawn from the leaderboard's
# docs/assets/raw_data.json: level 1 or 2; the solution's code has
# `load_inline` and a `__global__` kernel; its kernel_eval_time at most 5 ms
# (so that KernelBench's 100 timed trials stay short).  "custom": the code
# names none of the PyTorch/cuBLAS entry points of the task's core work
# (torch.matmul, nn.Conv*, nn.Linear, norms, cublas, at::mm ...); 16 level-1
# and 4 level-2 problems spread evenly over the problem ids, one solution each
# (of a problem's solutions sorted by file id, the k-th pick takes the one at
# position k modulo their number); "keeps-torch-core": 4 level-2 solutions whose code
# keeps such a module and fuses the rest.  raw_data's problem_id counts from
# 0; the leaderboard's problem file is l<level>_p<problem_id + 1>.py.
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MIRROR=${KAUDIT_MIRROR:-/work/.mirror}
LB_COMMIT=170ca7965f53bba599d1078b6fcaa5dd2658ec50
LIST=${1:-$ROOT/bench/corpus/leaderboard-24.tsv}
REPO=$MIRROR/anneouyang+KernelBenchLeaderboard/repo
DEST=$ROOT/.gpu-carry/leaderboard
rm -rf "$DEST"
mkdir -p "$DEST/problems" "$DEST/solutions"
tail -n +2 "$LIST" | while IFS=$'\t' read -r id level problem solution model kind; do
    git -C "$REPO" show "$LB_COMMIT:docs/assets/problems/$problem" >"$DEST/problems/$problem"
    git -C "$REPO" show "$LB_COMMIT:docs/assets/solutions/$solution.py" >"$DEST/solutions/$solution.py"
done
cp "$LIST" "$DEST/list.tsv"
du -sh "$DEST"
