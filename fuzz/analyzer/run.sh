#!/bin/sh
# run.sh - build the analyzer fuzz targets with clang's libFuzzer and run
# each for a bounded time.
#
#   fuzz/analyzer/run.sh BUILD_DIR [SECONDS]      (default 20 s per target)
#
# fuzz_contract: ka_contract_parse on arbitrary bytes (seeds: every
#   contracts/*/*.json; dictionary: contract.dict); an accepted contract is
#   then analyzed against a fixed synthetic session.
# fuzz_trace: ka_analyze on a session whose only trace is the input, with
#   contracts/controls/add.json (KA_FUZZ_CONTRACT picks another) and the
#   shipped H200 inventory (KA_FUZZ_INVENTORY picks another; set it empty for
#   none).  Seeds: the traces recorded on the H200 (examples/*/session) and
#   synthetic ones (mkseeds.c).
#
# Exit: 0 no finding; 1 a crash, leak, timeout or memory blow-up (the input
# is kept under BUILD_DIR/findings); 77 skipped because clang or libFuzzer
# is missing (apt-get install clang).  KA_FUZZ_CC picks another clang;
# KA_FUZZ_CFLAGS adds compiler flags (e.g. -fno-sanitize=nonnull-attribute to
# get past a known finding).
set -u
BUILD=${1:?usage: run.sh BUILD_DIR [SECONDS]}
SECS=${2:-20}
SRC=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SRC/../.." && pwd)
CC=${KA_FUZZ_CC:-clang}

if ! command -v "$CC" >/dev/null 2>&1; then
    echo "SKIPPED: '$CC' not found; the analyzer fuzzers need clang with libFuzzer (apt-get install clang)"
    exit 77
fi
mkdir -p "$BUILD" || exit 1
BUILD=$(cd "$BUILD" && pwd)
probe="$BUILD/probe"
mkdir -p "$probe"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$probe/t.c"
if ! "$CC" -fsanitize=fuzzer,address "$probe/t.c" -o "$probe/t" 2> "$probe/err"; then
    echo "SKIPPED: '$CC' cannot link -fsanitize=fuzzer (libFuzzer missing): $(head -n 1 "$probe/err")"
    exit 77
fi

echo "building the analyzer fuzz targets with $CC in $BUILD"
if ! cmake -S "$SRC" -B "$BUILD/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DKA_FUZZ_EXTRA_FLAGS="${KA_FUZZ_CFLAGS:-}" \
        > "$BUILD/configure.log" 2>&1; then
    cat "$BUILD/configure.log"
    exit 1
fi
if ! cmake --build "$BUILD/build" -j 4 > "$BUILD/build.log" 2>&1; then
    cat "$BUILD/build.log"
    exit 1
fi

# seeds
rm -rf "$BUILD/seeds"
mkdir -p "$BUILD/seeds/fuzz_contract" "$BUILD/seeds/fuzz_trace"
for f in "$REPO"/contracts/*/*.json; do
    [ -f "$f" ] && cp "$f" "$BUILD/seeds/fuzz_contract/$(basename "$(dirname "$f")")-$(basename "$f")"
done
for f in "$REPO"/examples/*/session/*.kat; do
    [ -f "$f" ] && cp "$f" "$BUILD/seeds/fuzz_trace/$(basename "$(dirname "$(dirname "$f")")")-$(basename "$f")"
done
"$BUILD/build/ka_fuzz_mkseeds" "$BUILD/seeds/fuzz_trace" || exit 1

if [ -z "${KA_FUZZ_INVENTORY+set}" ]; then
    inv="$REPO/inventory/data/h200-torch2.11-calibrated.inventory.zst"
    [ -f "$inv" ] || inv=
    KA_FUZZ_INVENTORY=$inv
fi
export KA_FUZZ_INVENTORY
echo "inventory for fuzz_trace: ${KA_FUZZ_INVENTORY:-none}"

status=0
for t in fuzz_contract fuzz_trace; do
    corpus="$BUILD/corpus/$t"
    findings="$BUILD/findings/$t"
    mkdir -p "$corpus" "$findings"
    dict=
    [ "$t" = fuzz_contract ] && dict="-dict=$SRC/contract.dict"
    # -error_exitcode: libFuzzer's default, 77, would read as "skipped"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
    "$BUILD/build/$t" -max_total_time="$SECS" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
        -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 $dict \
        -artifact_prefix="$findings/" "$corpus" "$BUILD/seeds/$t" > "$BUILD/$t.log" 2>&1
    rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$BUILD/$t.log" | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "$BUILD/$t.log" | tail -n 1)
    if [ $rc -ne 0 ]; then
        echo "FAIL $t (exit $rc) after ${runs:-?} runs; input kept in $findings:"
        tail -n 60 "$BUILD/$t.log"
        status=1
    else
        echo "ok   $t: ${runs:-?} runs in ${SECS} s, ${cov:-cov: ?} edges, corpus $(ls "$corpus" | wc -l) inputs"
    fi
done
exit $status
