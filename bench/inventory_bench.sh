#!/bin/sh
# inventory_bench.sh - `kaudit inventory build` beside `cuobjdump -symbols`
# over the same libraries, interleaved (ABBA), then lookups and peak memory.
# Meant for the GPU machine, where cuobjdump exists; the kaudit binaries can be
# built on a Debian 12 machine and carried over (they need libelf.so.1 and
# libzstd.so.1 at run time, both present there).
#
#   bench/inventory_bench.sh [-r RUNS] [-k KAUDIT] [-b KAUDIT_INVENTORY_BENCH] [LIB...]
#
# Default libraries: PyTorch's cuBLAS, cuBLASLt and cuDNN copies when
# /opt/torch/.venv exists (../shared/notes/gpu-facts.md), else those of
# /usr/local/cuda/lib64.  The target (issue 3, item 6): the kaudit build takes
# at most half of cuobjdump's wall time; lookups >= 10 M names/s.
set -u
RUNS=5
KAUDIT=${KAUDIT:-build/bin/kaudit}
BENCH=${BENCH:-build/bin/kaudit_inventory_bench}
while getopts r:k:b: opt; do
    case $opt in
    r) RUNS=$OPTARG ;;
    k) KAUDIT=$OPTARG ;;
    b) BENCH=$OPTARG ;;
    *) echo "usage: $0 [-r RUNS] [-k KAUDIT] [-b BENCH] [LIB...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

if [ $# -eq 0 ]; then
    T=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
    if [ -d "$T/cu13/lib" ] && [ -d "$T/cudnn/lib" ]; then
        set -- "$T/cu13/lib/libcublas.so.13" "$T/cu13/lib/libcublasLt.so.13" "$T/cudnn/lib"/libcudnn*.so.9
    else
        L=/usr/local/cuda/lib64
        set -- "$L/libcublas.so.13" "$L/libcublasLt.so.13" "$L"/libcudnn*.so.9
    fi
fi
for f in "$@"; do
    [ -f "$f" ] || { echo "missing library: $f" >&2; exit 2; }
done
[ -x "$KAUDIT" ] || { echo "kaudit not found at '$KAUDIT' (use -k)" >&2; exit 2; }
CUOBJDUMP=$(command -v cuobjdump || true)
[ -n "$CUOBJDUMP" ] || { [ -x /usr/local/cuda/bin/cuobjdump ] && CUOBJDUMP=/usr/local/cuda/bin/cuobjdump; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "host: $(uname -n), $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "libraries ($#):"
for f in "$@"; do echo "  $f ($(stat -c %s "$f") bytes)"; done
echo "kaudit: $KAUDIT ($("$KAUDIT" --version 2>/dev/null || echo '?'))"
echo "cuobjdump: ${CUOBJDUMP:-not found}${CUOBJDUMP:+ ($("$CUOBJDUMP" --version 2>/dev/null | tail -n 1))}"

# warm the page cache for both tools alike
cat "$@" > /dev/null

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
run_kaudit() {
    t0=$(now)
    "$KAUDIT" inventory build -o "$TMP/inv.txt" "$@" || { echo "kaudit inventory build failed" >&2; exit 1; }
    elapsed "$t0" "$(now)"
}
run_cuobjdump() {
    t0=$(now)
    for f in "$@"; do
        # A library without device code (libcudnn_graph) makes cuobjdump exit
        # non-zero; that is an answer, not a failure.
        "$CUOBJDUMP" -symbols "$f" > /dev/null 2> "$TMP/cuobjdump.err" ||
            grep -q 'does not contain device code' "$TMP/cuobjdump.err" ||
            { cat "$TMP/cuobjdump.err" >&2; echo "cuobjdump failed on $f" >&2; exit 1; }
    done
    elapsed "$t0" "$(now)"
}

: > "$TMP/k"
: > "$TMP/c"
i=1
while [ $i -le "$RUNS" ]; do
    if [ $((i % 2)) -eq 1 ]; then order="k c"; else order="c k"; fi
    line="run $i:"
    for w in $order; do
        if [ "$w" = k ]; then
            t=$(run_kaudit "$@"); echo "$t" >> "$TMP/k"; line="$line kaudit $t s"
        elif [ -n "$CUOBJDUMP" ]; then
            t=$(run_cuobjdump "$@"); echo "$t" >> "$TMP/c"; line="$line cuobjdump $t s"
        fi
    done
    echo "$line"
    i=$((i + 1))
done
km=$(median < "$TMP/k")
echo "kaudit inventory build: median $km s over $RUNS runs"
if [ -n "$CUOBJDUMP" ]; then
    cm=$(median < "$TMP/c")
    echo "cuobjdump -symbols:     median $cm s over $RUNS runs"
    awk -v k="$km" -v c="$cm" 'BEGIN { r = k / c; printf "ratio kaudit/cuobjdump: %.3f (target <= 0.5): %s\n", r, r <= 0.5 ? "MET" : "NOT MET" }'
fi
"$KAUDIT" inventory verify "$TMP/inv.txt"
if [ -x "$BENCH" ]; then
    echo "lookups and peak memory ($BENCH):"
    "$BENCH" --repeat 1 "$@"
else
    echo "no $BENCH: lookups not measured (use -b)"
fi
