#!/usr/bin/env bash
# bench/variants_h200.sh - one device call that compares kaudit builds and
# settings on the launch-bound loop (issue 17, item 5; bench/notes/overhead.md).
#
#   1. (VARIANTS_PAGE_TOUCH=1) bench/page_touch.c: what the first access to a
#      page of a fresh trace segment costs, and whether touching it ahead
#      from another thread takes the cost away.
#   2. in-process A/B against the CUPTI floor with callbacks (bench/kaudit_ab.sh,
#      AB_REFERENCE=floor; "resume" is everything kaudit records): one process
#      per variant and round, the variants alternating within each round.
#   3. (VARIANTS_PROFILE="NAME=DIR[:VAR=VALUE[+...]] ...") bench/wrapper_profile.py under each
#      carried profile build (bench/carry_wrapper_skips.sh NAME=profile): the
#      cublasLtMatmul wrapper's cycles per stage, VARIANTS_PROFILE_ROUNDS (2)
#      processes each, alternating.
#   4. (VARIANTS_GPU_BUDGET_S > 0) the GPU-bound loop, bare against kaudit
#      (bench/overhead.sh; target <= 1.01x).
#
#   VARIANTS_NEW=.gpu-carry/kaudit VARIANTS_OLD=.gpu-carry/kaudit-old bash bench/variants_h200.sh
#
# Builds from tests/gpu/carry_kaudit.sh.  VARIANTS_LIST: "NAME=BUILD[:VAR=VALUE[+VAR=VALUE]]"
# words, BUILD new, old or a carried install (bench/carry_wrapper_skips.sh's
# .gpu-carry/skip-NAME); the default is the ninth session's comparison (new,
# old, chunked=new:KAUDIT_CUPTI_CHUNK_KB=16, staging=new:KAUDIT_VENDOR_STAGING=1).
# VARIANTS_ROUNDS (4), VARIANTS_REPEATS (30), VARIANTS_SETTINGS ("pause floor
# resume"; VARIANTS_ROUNDS=0 skips the A/B), VARIANTS_GPU_BUDGET_S (100; 0
# skips it).  Output: the console summaries; $OUT/page-touch.jsonl,
# $OUT/kaudit-ab.jsonl, $OUT/wrapper-profile.jsonl, $OUT/gpu-bound/.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/h200_env.sh"
NEW=$(cd "${VARIANTS_NEW:-.gpu-carry/kaudit}" && pwd)/bin/kaudit
OLD=$( (cd "${VARIANTS_OLD:-.gpu-carry/kaudit-old}" 2>/dev/null && pwd) || echo /missing)/bin/kaudit
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1
uname -r
if [ "${VARIANTS_PAGE_TOUCH:-0}" = 1 ]; then
    cc -O2 -pthread bench/page_touch.c -o /tmp/page_touch && /tmp/page_touch 5 | tee "$OUTDIR/page-touch.jsonl"
fi
read -r -a VARIANTS <<<"${VARIANTS_LIST:-new=new old=old chunked=new:KAUDIT_CUPTI_CHUNK_KB=16 staging=new:KAUDIT_VENDOR_STAGING=1}"
ab() { # NAME=BUILD[:VAR=VALUE[+...]] ROUND: one process of kaudit_ab.sh
    local name=${1%%=*} spec=${1#*=} envs=() k
    case ${spec%%:*} in
    new) k=$NEW ;;
    old) k=$OLD ;;
    *) [ -x "${spec%%:*}/bin/kaudit" ] || { echo "$1: no build ${spec%%:*}"; return; }
       k=$(cd "${spec%%:*}" && pwd)/bin/kaudit ;;
    esac
    [[ $spec == *:* ]] && IFS=+ read -r -a envs <<<"${spec#*:}"
    env "${envs[@]}" OUT="$OUTDIR" AB_KAUDIT="$k" AB_NAME="$name-r$2" AB_PROCESSES=1 \
        AB_SETTINGS="${VARIANTS_SETTINGS:-pause floor resume}" AB_REFERENCE=floor \
        AB_REPEATS="${VARIANTS_REPEATS:-30}" PYTHON="$PY" bash bench/kaudit_ab.sh
}
for ((round = 0; round < ${VARIANTS_ROUNDS:-4}; round++)); do
    for v in "${VARIANTS[@]}"; do ab "$v" "$round"; done
done
echo "A/B done at $((SECONDS - start)) s"
[ -f "$OUTDIR/kaudit-ab.jsonl" ] && "$PY" - "$OUTDIR/kaudit-ab.jsonl" <<'PYEOF'
import json, statistics, sys
by = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    variant = d["process"].rsplit("-r", 1)[0]
    by.setdefault(variant, []).append(d["settings"]["resume"]["ratio_median"])
for b, v in by.items():
    print("%-12s resume/floor per process: %s; median %.3f" % (b, " ".join("%.3f" % x for x in v), statistics.median(v)))
PYEOF
read -r -a PROFILES <<<"${VARIANTS_PROFILE:-}"
for ((round = 0; round < ${VARIANTS_PROFILE_ROUNDS:-2}; round++)); do
    for p in "${PROFILES[@]}"; do
        spec=${p#*=} envs=()
        k=$(cd "${spec%%:*}" && pwd)/bin/kaudit
        [[ $spec == *:* ]] && IFS=+ read -r -a envs <<<"${spec#*:}"
        rm -rf /tmp/variants-profile.session
        env "${envs[@]}" KAUDIT_BENCH_CONTROL=1 "$k" run -d /tmp/variants-profile.session -- "$PY" bench/wrapper_profile.py \
            >/tmp/variants-profile.json 2>/tmp/variants-profile.err || tail -5 /tmp/variants-profile.err
        "$PY" - "${p%%=*}-r$round" /tmp/variants-profile.json >>"$OUTDIR/wrapper-profile.jsonl" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[2]))
d["process"] = sys.argv[1]
print(json.dumps(d))
for setting, rows in d["settings"].items():
    for r in rows:
        print("%s %-8s %6.1f us/iter  " % (sys.argv[1], setting, r["us_per_iteration"])
              + " ".join("%s %.0f" % (k[:-3], v) for k, v in r.items() if k.endswith("_ns") and k != "real_call_ns")
              + " inline maps %s" % r.get("segments_mapped_inline", "?"),
              file=sys.stderr)
PYEOF
    done
done
if [ "${VARIANTS_GPU_BUDGET_S:-100}" != 0 ]; then
    mkdir -p "$OUTDIR/gpu-bound"
    OUT=$OUTDIR/gpu-bound BENCH_KAUDIT=$NEW BENCH_MODES="bare kaudit" BENCH_ARGS="--loop gpu --json" BENCH_MARGINAL=0 \
        BENCH_BUDGET_S=${VARIANTS_GPU_BUDGET_S:-100} PYTHON=$PY bash bench/overhead.sh 2>&1 | tail -15
fi
echo "done at $((SECONDS - start)) s"
