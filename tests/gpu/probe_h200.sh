#!/usr/bin/env bash
# tests/gpu/probe_h200.sh - the causal probe on the H200 (issue 16;
# docs/audit.md, "Causal probe"): `kaudit audit --device cuda --timing off` of
# the delegation controls of tests/gpu/controls against their contracts,
# weak verifier ACCEPT: each conviction should carry the output's change
# with the forbidden operators replaced by noise; deleg_discarded_gemm
# (cuBLAS computed and thrown away) should not be convicted; the bias
# epilogue allowed by the contract should not be either.  Work an extension hands
# to cuBLAS, cuBLASLt or cuDNN itself is the vendor channel's (tests/gpu/controls/vendor_ext.py); deleg_ext_mixed's
# two library calls are replayed one at a time.
#   bash tests/gpu/carry_kaudit.sh           (here)
#   bash tests/gpu/probe_h200.sh             (on the device, carrying .gpu-carry)
# Output: $OUT/probe-controls.tsv, probe-log.txt, probe-records.tar.gz.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUTDIR"
K=${KAUDIT:-$ROOT/.gpu-carry/kaudit/bin/kaudit}
W=${KAUDIT_PROBE_WORK:-/tmp/kaudit-probe-h200}
export KAUDIT_PYTHON=${KAUDIT_PYTHON:-python3}
DEADLINE=${PROBE_DEADLINE_S:-480}
log=$OUTDIR/probe-log.txt
rm -rf "$W"
mkdir -p "$W/records"
: >"$log"
start=$SECONDS
export TORCH_EXTENSIONS_DIR=$W/torch-extensions   # the contracts' candidate.objects pattern
# the controls' extensions, built once before the audits (outside kaudit), in parallel
(cd "$ROOT" && timeout 300 "$KAUDIT_PYTHON" tests/gpu/controls/kernels.py --build) >"$W/build-kernels.log" 2>&1 &
for ext in vendor aten; do
    (cd "$ROOT" && timeout 300 "$KAUDIT_PYTHON" tests/gpu/controls/vendor_ext.py --build $ext) >"$W/build-$ext.log" 2>&1 &
done
wait
for f in "$W"/build-*.log; do echo "== $f"; tail -5 "$f"; done >>"$log"
echo "extensions built after $((SECONDS - start)) s" | tee -a "$log"
table=$OUTDIR/probe-controls.tsv
printf 'name\ttask\texit\timplementation\tcertificate\toutcome\tprobe\toutput_change\tvendor_calls\tvendor_output_change\ttargets\tconvicting\tchannel\tper_item\twall_s\tprobe_s\n' >"$table"
cases="
deleg_torch_matmul matmul
deleg_nn_linear linear
deleg_conv2d conv
deleg_unused_kernel matmul
deleg_failed_build matmul
deleg_ext_cublas matmul
deleg_ext_cublas_discarded matmul
deleg_ext_cublaslt matmul
deleg_ext_cudnn conv
deleg_ext_mixed matmul
deleg_aten_cpp matmul
deleg_discarded_gemm matmul
allowed_bias_epilogue gemm_bias gemm-bias
clean_tiled_gemm matmul
"
echo "$cases" | while read -r name task contract; do
    [ -n "$name" ] || continue
    case " ${PROBE_ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
    if [ $((SECONDS - start)) -ge "$DEADLINE" ]; then echo "CASE $name not run (deadline)" | tee -a "$log"; continue; fi
    t0=$SECONDS
    "$K" audit --reference "$ROOT/tests/gpu/controls/tasks/$task.py" \
        --candidate "$ROOT/tests/gpu/controls/candidates/$name.py" \
        --contract "$ROOT/contracts/controls/${contract:-$task}.json" --device cuda --timing off --weak ACCEPT --quiet \
        -d "$W/$name" --json "$W/records/$name.json" >>"$log" 2>&1
    rc=$?
    row=$("$KAUDIT_PYTHON" - "$W/records/$name.json" <<'PYEOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no-record\t-\t-\t-\t-\t-\t-\t-\t-\t-"); sys.exit()
p = r.get("probe") or {}
conv = [f for f in r["analysis"]["findings"] if f["kind"] == "convicts" or f["code"] == "forbidden-work-unused"]
codes = ",".join(sorted(set(f["code"] for f in conv))) or "-"
chan = ",".join(sorted(set((f.get("fields") or {}).get("channel", "-") for f in conv))) or "-"
# each library call item: what decided it (the replay of that call, its family, all) and its change
items = []   # one per distinct (library, finding, level, change): the harness's calls repeat them
for f in conv:
    fl = f.get("fields") or {}
    if "vendor_localized" in fl:
        items.append("%s/%s:%s:%s" % (fl.get("library", "?"), f["code"], fl["vendor_localized"],
                                      fl.get("item_output_change", fl.get("vendor_output_change", "-"))))
per_item = ";".join(dict.fromkeys(items)) or "-"
print("\t".join(str(x) for x in (r["axes"]["implementation"]["verdict"], r["certificate"], r["outcome"],
      p.get("state"), p.get("output_change", "-"), p.get("vendor_calls", "-"), p.get("vendor_output_change", "-"),
      p.get("targets", "-") or "-", codes, chan, per_item, r["wall_s"], p.get("seconds", "-"))))
PYEOF
)
    printf '%s\t%s\t%s\t%s\n' "$name" "$task" "$rc" "$row" | tee -a "$table"
    # the runner's probe event too (per-replay seconds)
    grep -h '"probe"' "$W/$name/runner/events.jsonl" >"$W/records/$name.probe.json" 2>/dev/null
    tar -C "$W" -czf "$OUTDIR/probe-records.tar.gz" records
done
echo "PROBE done in $((SECONDS - start)) s" | tee -a "$log"
