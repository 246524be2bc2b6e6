#!/bin/sh
# run.sh - build the inventory fuzz targets with clang's libFuzzer and run
# each for a bounded time on a synthetic seed corpus.
#
#   fuzz/inventory/run.sh BUILD_DIR [SECONDS]      (default 20 s per target)
#
# Exit: 0 no finding; 1 a crash, leak, timeout or memory blow-up (the input
# is kept under BUILD_DIR/findings); 77 skipped because clang or libFuzzer
# is missing (CI installs them: apt-get install clang).  KINV_FUZZ_CC picks
# another clang.
set -u
BUILD=${1:?usage: run.sh BUILD_DIR [SECONDS]}
SECS=${2:-20}
SRC=$(cd "$(dirname "$0")" && pwd)
CC=${KINV_FUZZ_CC:-clang}

if ! command -v "$CC" >/dev/null 2>&1; then
    echo "SKIPPED: '$CC' not found; the inventory fuzzers need clang with libFuzzer (apt-get install clang)"
    exit 77
fi
mkdir -p "$BUILD" || exit 1
probe="$BUILD/probe"
mkdir -p "$probe"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$probe/t.c"
if ! "$CC" -fsanitize=fuzzer,address "$probe/t.c" -o "$probe/t" 2> "$probe/err"; then
    echo "SKIPPED: '$CC' cannot link -fsanitize=fuzzer (libFuzzer missing): $(head -n 1 "$probe/err")"
    exit 77
fi

echo "building the fuzz targets with $CC in $BUILD"
if ! cmake -S "$SRC" -B "$BUILD/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        > "$BUILD/configure.log" 2>&1; then
    cat "$BUILD/configure.log"
    exit 1
fi
if ! cmake --build "$BUILD/build" -j 4 > "$BUILD/build.log" 2>&1; then
    cat "$BUILD/build.log"
    exit 1
fi
rm -rf "$BUILD/seeds"
"$BUILD/build/kinv_mkseeds" "$BUILD/seeds" || exit 1

status=0
for t in fuzz_library fuzz_fatbin fuzz_inventory; do
    corpus="$BUILD/corpus/$t"
    findings="$BUILD/findings/$t"
    mkdir -p "$corpus" "$findings"
    # -error_exitcode: libFuzzer's default, 77, would read as "skipped"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
    "$BUILD/build/$t" -max_total_time="$SECS" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
        -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
        -artifact_prefix="$findings/" "$corpus" "$BUILD/seeds/$t" > "$BUILD/$t.log" 2>&1
    rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$BUILD/$t.log" | grep -o '[0-9]*$')
    if [ $rc -ne 0 ]; then
        echo "FAIL $t (exit $rc) after ${runs:-?} runs; input kept in $findings:"
        tail -n 40 "$BUILD/$t.log"
        status=1
    else
        echo "ok   $t: ${runs:-?} runs in ${SECS} s, corpus $(ls "$corpus" | wc -l) inputs"
    fi
done
exit $status
