#!/bin/sh
# Golden outputs: every recorded session in examples/ (tests/golden/sessions.tsv)
# through `kaudit dump` (text, --json, --kernels) and, where the session has a
# contract, `kaudit analyze`, `kaudit report` (text and --json) and
# `report --perfetto`, compared byte for byte with tests/golden/expected/.
#
#   sh tests/golden/check.sh KAUDIT SRCDIR            compare (exit 1 on any difference)
#   sh tests/golden/check.sh KAUDIT SRCDIR --update   rewrite the expected outputs
#
# Commands run from SRCDIR with relative paths, so outputs do not depend on
# where the tree is checked out.  A command's exit status is kept beside its
# output ("exit N" in NAME.status), its standard error in NAME.stderr when it
# wrote any.  A diff in review shows every change of what kaudit prints.
set -u
kaudit=$1
src=$2
mode=${3:-check}
case "$kaudit" in /*) ;; *) kaudit=$(pwd)/$kaudit ;; esac
cd "$src" || exit 99
expected=tests/golden/expected
inventory=inventory/data/h200-torch2.11-calibrated.inventory.zst
out=$(mktemp -d "${TMPDIR:-/tmp}/kaudit-golden.XXXXXX") || exit 99
trap 'rm -rf "$out"' EXIT

# run NAME DIR COMMAND...: stdout to DIR/NAME, stderr to DIR/NAME.stderr, status to DIR/NAME.status
run() {
    name=$1 dir=$2
    shift 2
    "$@" >"$dir/$name" 2>"$dir/$name.stderr"
    echo "exit $?" >"$dir/$name.status"
    [ -s "$dir/$name.stderr" ] || rm -f "$dir/$name.stderr"
}

grep -v '^#' tests/golden/sessions.tsv | while IFS='	' read -r session contract weak; do
    [ -n "$session" ] || continue
    dir=$out/$(echo "${session#examples/}" | tr / _)
    mkdir -p "$dir"
    run dump.txt "$dir" "$kaudit" dump "$session/session"
    run dump.json "$dir" "$kaudit" dump --json "$session/session"
    run kernels.txt "$dir" "$kaudit" dump --kernels "$session/session"
    [ "$contract" = - ] && continue
    set -- --contract "contracts/$contract" --inventory "$inventory"
    [ "$weak" = - ] || set -- "$@" --weak "$weak"
    run analyze.txt "$dir" "$kaudit" analyze "$session/session" "$@"
    run report.txt "$dir" "$kaudit" report "$session/session" "$@"
    run report.json "$dir" "$kaudit" report "$session/session" "$@" --json
    run perfetto.stdout "$dir" "$kaudit" report "$session/session" "$@" --perfetto "$dir/perfetto.json"
done

if [ "$mode" = --update ]; then
    rm -rf "$expected"
    mkdir -p "$expected"
    cp -R "$out"/. "$expected"/
    echo "golden: wrote $(find "$expected" -type f | wc -l) files under $expected"
    exit 0
fi
if diff -r -u "$expected" "$out" >"$out.diff" 2>&1; then
    echo "golden: $(find "$out" -type f | wc -l) outputs match"
    rm -f "$out.diff"
    exit 0
fi
head -c 20000 "$out.diff"
echo
echo "golden: outputs differ from $expected (sh tests/golden/check.sh KAUDIT . --update rewrites them)"
rm -f "$out.diff"
exit 1
