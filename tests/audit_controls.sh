#!/bin/sh
# tests/audit_controls.sh KAUDIT PYTHON SRCDIR - every row of
# tests/audit/controls.tsv through `kaudit audit --device cpu` with its task's
# pinned contract (tests/audit/contracts, checked against manifest.json): the
# semantic verdict must equal the row's expected_semantic.  Prints a table.
# Exit 77 (skip) when PYTHON has no torch, unless CI is set (then FAIL).
NAME=audit_controls.sh
. "$(dirname "$0")/audit_env.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
A=$SRC/tests/audit
fails=0 rows=0
t_start=$(date +%s)
printf '%-26s %-8s %-9s %-13s %-5s %4s  %s\n' name task expected semantic exit secs result
tail -n +2 "$A/controls.tsv" >"$T/rows"
while IFS='	' read -r name task cand expected what; do
    [ -n "$name" ] || continue
    rows=$((rows + 1))
    t0=$(date +%s)
    timeout 300 "$K" audit --reference "$A/tasks/$task.py" --candidate "$A/candidates/$cand.py" \
        --contract "$A/contracts/$task.json" --manifest "$A/contracts/manifest.json" \
        --device cpu -d "$T/$name" --json "$T/$name.json" --quiet >"$T/$name.out" 2>&1 </dev/null
    rc=$?
    got=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["axes"]["semantic"]["verdict"])' \
        "$T/$name.json" 2>/dev/null || echo "no-record")
    # on CPU: a semantic FAIL is a FAIL certificate (10), anything else INCONCL (11)
    want_rc=11
    [ "$expected" = FAIL ] && want_rc=10
    if [ "$got" = "$expected" ] && [ "$rc" = "$want_rc" ]; then
        result=ok
    else
        result="MISMATCH (exit $rc, want $want_rc)"
        fails=$((fails + 1))
        sed -n '1,20p' "$T/$name.out" | sed 's/^/    /'
    fi
    printf '%-26s %-8s %-9s %-13s %-5s %4s  %s\n' "$name" "$task" "$expected" "$got" "$rc" \
        "$(( $(date +%s) - t0 ))" "$result"
done <"$T/rows"
echo "audit_controls: $((rows - fails)) of $rows rows as expected, $(( $(date +%s) - t_start )) s"
[ "$rows" -gt 0 ] && [ "$fails" -eq 0 ]
