# tests/cli_env.sh - sourced by the tests/cli_*.sh scripts (KAUDIT [SOURCE_DIR]):
# K and SRC from the arguments, a temporary directory T removed at exit, and
# the checks they share.  RUN_TIMEOUT=S before sourcing: run gives each
# command at most S seconds (an input that would hang fails instead).
K=$1
SRC=${2-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
# check NAME CONDITION...: counted; a failure is named, with the end of what
# the last `run` printed
check() {
    _name=$1; shift
    if "$@"; then
        passes=$((passes + 1))
    else
        echo "FAIL: $_name"
        for _f in "$T/err" "$T/out"; do [ -f "$_f" ] && sed 's/^/    /' "$_f"; done | head -20
        fails=$((fails + 1))
    fi
}
# run ARGS...: kaudit ARGS, its output in $T/out and $T/err, its status in $T/rc
run() {
    if [ -n "${RUN_TIMEOUT:-}" ]; then
        timeout "$RUN_TIMEOUT" "$K" "$@" >"$T/out" 2>"$T/err"
    else
        "$K" "$@" >"$T/out" 2>"$T/err"
    fi
    echo $? >"$T/rc"
}
rc() { [ "$(cat "$T/rc")" = "$1" ]; }
err_has() { grep -q -- "$1" "$T/err"; }
out_has() { grep -q -- "$1" "$T/out"; }
# finish [NAME]: the tally; the script's status
finish() {
    echo "${1:+$1: }$passes passed, $fails failed"
    [ "$fails" -eq 0 ]
}
