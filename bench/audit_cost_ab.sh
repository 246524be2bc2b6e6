#!/usr/bin/env bash
# bench/audit_cost_ab.sh - what the isolated audit and stress v2 cost, as
# ratios of `kaudit audit` wall times in interleaved runs on one GPU machine
# (docs/audit.md, "Speed"; bench/notes/gpu-suite.md).
#
# Builds compared (each the full kaudit carried by tests/gpu/carry_kaudit.sh,
# with that commit's own tests/audit beside it):
#   .gpu-carry/kaudit-2417f31   before the isolated audit (one process, root)
#   .gpu-carry/kaudit-f7d0704   the isolated audit, before stress v2
#   .gpu-carry/kaudit           this tree ("now"); "now-after-reference": the
#                               same with KAUDIT_PARTY_START=after-reference
#                               (the candidate's process started after the
#                               reference's build, as before start_early)
# Recipe, here: for c in 2417f31 f7d0704: git worktree add /tmp/kw-$c $c,
# bash tests/gpu/carry_kaudit.sh there, copy its .gpu-carry/kaudit to
# .gpu-carry/kaudit-$c and its tests/audit to .gpu-carry/kaudit-$c/tests/audit.
#
# Each round audits every control of COST_CONTROLS with every build, the
# builds' order rotated per control and per round (no build always first
# after a cold start).  One line per audit in $OUT/cost-ab.tsv: round,
# control, build, exit, wall_s measured outside, the record's wall_s, its
# certificate, its phases_s (phase_s for builds before it).  COST_BUILDS
# (default "2417f31 f7d0704 now"), COST_ROUNDS (2), COST_DEADLINE_S (540): no
# new audit starts after that many seconds.  COST_WARMUP (1): before the
# rounds, each build audits the first control once, as round "warmup" in the
# table and left out of every ratio: on a fresh machine the first audit reads
# Python's, PyTorch's and CUDA's files from disk, and only the build that
# happens to go first would pay for it (1.81 against 0.98 and 1.09 for the
# same control's later rounds in the fourth session).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${OUT:-$ROOT/bench-out}
mkdir -p "$OUTDIR"
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
CONTROLS=${COST_CONTROLS:-"reordered_reduction alt_fp32_algorithm weight_cache_invalidated private_scratch probe_own_matmul hardcoded_nominal"}
ROUNDS=${COST_ROUNDS:-2}
DEADLINE=${COST_DEADLINE_S:-540}
W=$(mktemp -d /tmp/kaudit-cost.XXXXXX)
chmod 711 "$W"
table=$OUTDIR/cost-ab.tsv
builds=${COST_BUILDS:-"2417f31 f7d0704 now"}
printf 'round\tcontrol\tbuild\texit\twall_outside_s\twall_s\tcertificate\tphase_s\n' >"$table"
start=$SECONDS

kaudit_of() { case "$1" in now*) echo "$ROOT/.gpu-carry/kaudit/bin/kaudit" ;; *) echo "$ROOT/.gpu-carry/kaudit-$1/bin/kaudit" ;; esac; }
audit_dir_of() { case "$1" in now*) echo "$ROOT/tests/audit" ;; *) echo "$ROOT/.gpu-carry/kaudit-$1/tests/audit" ;; esac; }
party_start_of() { case "$1" in now-after-reference) echo after-reference ;; *) echo "" ;; esac; }

rounds=$(seq 1 "$ROUNDS")
[ "${COST_WARMUP:-1}" = 0 ] || rounds="warmup $rounds"
i=0
for round in $rounds; do
    names=$CONTROLS
    [ "$round" = warmup ] && names=${CONTROLS%% *}
    for name in $names; do
        i=$((i + 1))
        # the builds' order rotated by i
        set -- $builds
        n=$#
        for _ in $(seq 1 $((i % n))); do first=$1; shift; set -- "$@" "$first"; done
        for b in "$@"; do
            [ $((SECONDS - start)) -lt "$DEADLINE" ] || { echo "deadline: round $round $name $b not run" >>"$OUTDIR/cost-log.txt"; continue; }
            A=$(audit_dir_of "$b")
            line=$(awk -F'\t' -v n="$name" '$1 == n { print $2 "\t" $3 }' "$A/controls.tsv")
            task=${line%%	*} cand=${line#*	}
            d=$W/$round-$name-$b
            t0=$(date +%s.%N)
            KAUDIT_PARTY_START=$(party_start_of "$b") "$(kaudit_of "$b")" audit --reference "$A/tasks/$task.py" --candidate "$A/candidates/$cand.py" \
                --contract "$A/contracts/$task.json" --device cuda --weak ACCEPT --quiet \
                -d "$d" --json "$d.json" >>"$OUTDIR/cost-log.txt" 2>&1
            rc=$?
            t1=$(date +%s.%N)
            rec=$("$KAUDIT_PYTHON" -c 'import json,sys
try:
    r = json.load(open(sys.argv[1]))
    print("%.2f\t%s\t%s" % (r.get("wall_s", -1), r.get("certificate"), json.dumps(r.get("phases_s") or r.get("phase_s"), separators=(",", ":"))))
except Exception as e:
    print("-\t-\t" + type(e).__name__)' "$d.json")
            printf '%s\t%s\t%s\t%s\t%.2f\t%s\n' "$round" "$name" "$b" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$rec" >>"$table"
            rm -rf "$d"
        done
    done
done
cat "$table"
# Per round and control, the last build's wall time (measured outside) over
# the first's; p50 and p95 by the paper's quantile rule, index floor(n q);
# the warm-up round left out.
"$KAUDIT_PYTHON" - "$table" $builds <<'EOF' | tee "$OUTDIR/cost-summary.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
base, other = sys.argv[2], sys.argv[-1]
wall = {(r["round"], r["control"], r["build"]): float(r["wall_outside_s"]) for r in rows if r["round"] != "warmup"}
ratios = sorted((wall[(rd, c, other)] / wall[(rd, c, base)], rd, c) for (rd, c, b) in wall
                if b == base and (rd, c, other) in wall)
q = lambda p: ratios[min(len(ratios) - 1, int(len(ratios) * p))][0]
if ratios:
    print("%s over %s: %d pairs, p50 %.3f, p95 %.3f, min %.3f, max %.3f" % (
        other, base, len(ratios), q(0.5), q(0.95), ratios[0][0], ratios[-1][0]))
    for x, rd, c in ratios:
        print("  %.3f  round %s %s" % (x, rd, c))
else:
    print("no complete pair")
EOF
