#!/bin/sh
# tests/install.sh CMAKE BUILD_DIR - `cmake --install` to a fresh prefix, then
# the installed kaudit from an unrelated directory: analyze with no
# --inventory uses (and names) the bundled inventory, demo runs, and `kaudit
# run` finds the installed preload, audit module and Python files (with the
# stand-in CUDA libraries when the build has them).  A copied binary without
# the layout is told so, and never falls back to the build or source tree.
CMAKE=$1
B=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
P=$T/prefix
W=$T/work
mkdir -p "$W"
fails=0 passes=0
check() { # name, condition...
    name=$1; shift
    if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; sed 's/^/    /' "$T/err" "$T/out" 2>/dev/null | head -20; fails=$((fails + 1)); fi
}
rc() { [ "$(cat "$T/rc")" = "$1" ]; }
err_has() { grep -q -- "$1" "$T/err"; }
out_has() { grep -q -- "$1" "$T/out"; }
# in W, with none of kaudit's overrides from the caller's environment
run() { (cd "$W" && env -u KAUDIT_INVENTORY -u KAUDIT_DATA_DIR -u KAUDIT_PRELOAD_LIB -u KAUDIT_AUDIT_LIB \
    "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"); }

"$CMAKE" --install "$B" --prefix "$P" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"
check "cmake --install: exit 0" rc 0
K=$P/bin/kaudit
S=$P/share/kaudit
INV=$S/inventory/data/h200-torch2.11-calibrated.inventory.zst
for f in "$K" "$P/lib/kaudit/libkaudit_preload.so" "$P/lib/kaudit/libkaudit_audit.so" \
         "$P/lib/kaudit/kaudit-python/sitecustomize.py" "$INV" "$S/contracts/manifest.json" \
         "$S/contracts/controls/add.json" "$S/contracts/controls/matmul.json" \
         "$S/examples/controls/timing_thread/session/info" "$S/examples/controls/deleg_torch_matmul/session/info"; do
    check "installed: ${f#"$P"/}" test -r "$f"
done

run "$K" analyze "$S/examples/controls/timing_thread/session" --contract "$S/contracts/controls/add.json"
check "installed analyze, no --inventory: exit 10 (FAIL)" rc 10
check "installed analyze: names the bundled inventory" out_has "inventory: $INV (digest [0-9a-f]\{32\})"
check "installed analyze: certificate FAIL" out_has "certificate     FAIL"
run "$K" report "$S/examples/controls/deleg_torch_matmul/session" --contract "$S/contracts/controls/matmul.json" --json
check "installed report --json: exit 10" rc 10
check "installed report --json: names the bundled inventory" out_has "\"file\":	\"$INV\""
run "$K" analyze "$S/examples/controls/timing_thread/session" --contract "$S/contracts/controls/add.json" --inventory none
check "installed analyze --inventory none: exit 10" rc 10
check "installed analyze --inventory none: said" out_has "inventory: none"

run "$K" demo
check "installed demo: exit 0" rc 0
check "installed demo: the add candidate's outcome" out_has "outcome         C3c          weak verifier ACCEPT: false accept: the measurement axis FAILs"
check "installed demo: the matmul candidate's outcome" out_has "outcome: C3b — false accept: the implementation axis FAILs"
check "installed demo: says where its data is" err_has "kaudit: note: demo data in $S"

cp "$T/out" "$T/demo-installed"
run "$B/bin/kaudit" demo
check "build-tree demo: exit 0" rc 0
check "build-tree demo: prints what the installed one prints" cmp -s "$T/out" "$T/demo-installed"

run "$K" run -- true
check "installed run -- true: exit 0" rc 0
check "installed run: the installed preload" grep -qx "preload: $P/lib/kaudit/libkaudit_preload.so" "$W/kaudit.session/info"
check "installed run: the installed audit module" grep -qx "audit_lib: $P/lib/kaudit/libkaudit_audit.so" "$W/kaudit.session/info"
check "installed run: the installed Python files" grep -qx "python_provenance: $P/lib/kaudit/kaudit-python" "$W/kaudit.session/info"
run "$K" run -- true
check "installed run again: a second session" test -r "$W/kaudit-2.session/info"

# KAUDIT_PRELOAD_LIB still wins over the install layout.
(cd "$W" && KAUDIT_PRELOAD_LIB=$B/lib/libkaudit_preload.so "$K" run -d "$W/over" -- true >"$T/out" 2>"$T/err")
check "KAUDIT_PRELOAD_LIB wins" grep -q "^preload: .*/lib/libkaudit_preload.so" "$W/over/info"
check "KAUDIT_PRELOAD_LIB wins (not the installed one)" sh -c '! grep -q "^preload: $1/lib/kaudit/" "$2"' - "$P" "$W/over/info"

# A recorded program through the stand-in CUDA libraries, if the build has them.
if [ -x "$B/standin-programs/prog_recording" ] && [ -d "$B/standin" ]; then
    run env LD_LIBRARY_PATH="$B/standin" "$K" run -d "$W/rec" -- "$B/standin-programs/prog_recording" launches 10
    check "installed run of a stand-in program: exit 0" rc 0
    run "$K" dump "$W/rec"
    check "installed run of a stand-in program: kernels recorded" out_has "^  kernels: 10$"
    check "installed run of a stand-in program: no health problems" out_has "^  health_problems: 0$"
fi

# A copied binary, away from any layout: said, and no build/source fallback.
mkdir -p "$T/lonely"
cp "$K" "$T/lonely/kaudit"
run "$T/lonely/kaudit" run -d "$W/lonely" -- true
check "copied binary: exit 1" rc 1
check "copied binary: cannot find the preload" err_has "kaudit: error: cannot find libkaudit_preload.so beside '$T/lonely'"
run "$T/lonely/kaudit" analyze "$S/examples/controls/timing_thread/session" --contract "$S/contracts/controls/add.json"
check "copied binary: analyze warns that it has no bundled inventory" err_has "cannot find the bundled inventory"
check "copied binary: and judges without one" out_has "inventory: none"
run "$T/lonely/kaudit" demo
check "copied binary: demo cannot find its data: exit 1" rc 1

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
