#!/bin/sh
# tests/cli_plots.sh KAUDIT SRCDIR - `kaudit validators LEDGER --plot DIR`:
# the four files, PNG and SVG by their signatures, the tables still on
# standard output, and a DIR that cannot be made is an error naming it.
# (What the plots show is test_plots.c's.)
K=$1 SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
check() { # what, condition...
    _what=$1; shift
    if "$@"; then passes=$((passes + 1)); else echo "FAIL: $_what"; fails=$((fails + 1)); fi
}
L=$SRC/tests/validators/ledger.jsonl D=$SRC/tests/validators/decisions.jsonl
"$K" validators "$L" --decisions "$D" --plot "$T/plots" >"$T/out.md" 2>"$T/err"
check "--plot: exit 0 ($(cat "$T/err"))" [ $? = 0 ]
check "--plot: the tables still printed" grep -q "## False accepts" "$T/out.md"
for f in false_accepts mcnemar; do
    check "$f.png is a PNG" sh -c "head -c 8 '$T/plots/$f.png' | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$'"
    check "$f.svg is an SVG" grep -q '<svg xmlns="http://www.w3.org/2000/svg"' "$T/plots/$f.svg"
done
echo x >"$T/file"
"$K" validators "$L" --plot "$T/file" >/dev/null 2>"$T/err2"
rc=$?
check "--plot onto a file: exit 1 (got $rc)" [ $rc = 1 ]
check "--plot onto a file: names it ($(cat "$T/err2"))" grep -q "'$T/file' is not a directory" "$T/err2"
"$K" validators "$L" --plot "$T/no/such/dir" >/dev/null 2>"$T/err3"
rc=$?
check "--plot under a missing directory: exit 1 (got $rc)" [ $rc = 1 ]
check "--plot under a missing directory: names it" grep -q "cannot create the plot directory '$T/no/such/dir'" "$T/err3"
echo "$passes passed, $fails failed"
[ $fails = 0 ]
