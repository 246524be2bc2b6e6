#!/bin/sh
# inventory_cuobjdump_check.sh - exactness against cuobjdump itself (issue 3,
# item 2, on the GPU machine): for each library, the entry functions that
# `cuobjdump -symbols` lists (STO_ENTRY) must equal the cubin names the
# inventory finds in the library's .nv_fatbin.
#
#   bench/inventory_cuobjdump_check.sh [-k KAUDIT] LIB...
#
# Exit 0 when every library matches, 1 otherwise, 2 on usage errors.
set -u
KAUDIT=${KAUDIT:-build/bin/kaudit}
while getopts k: opt; do
    case $opt in
    k) KAUDIT=$OPTARG ;;
    *) echo "usage: $0 [-k KAUDIT] LIB..." >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-k KAUDIT] LIB..." >&2; exit 2; }
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
[ -x "$CUOBJDUMP" ] || { echo "cuobjdump not found" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$KAUDIT" inventory build -o "$TMP/inv.txt" "$@" || exit 1
status=0
total_c=0
for f in "$@"; do
    b=$(basename "$f")
    "$CUOBJDUMP" -symbols "$f" 2>/dev/null | awk '/STO_ENTRY/ { print $NF }' | LC_ALL=C sort -u > "$TMP/c"
    "$KAUDIT" inventory names --kind cubin --fatbin-only --library "$b" "$TMP/inv.txt" | LC_ALL=C sort -u > "$TMP/k"
    only_c=$(LC_ALL=C comm -23 "$TMP/c" "$TMP/k" | wc -l)
    only_k=$(LC_ALL=C comm -13 "$TMP/c" "$TMP/k" | wc -l)
    printf '%-40s cuobjdump %6d  kaudit %6d  only-cuobjdump %d  only-kaudit %d\n' "$b" \
        "$(wc -l < "$TMP/c")" "$(wc -l < "$TMP/k")" "$only_c" "$only_k"
    if [ "$only_c" -ne 0 ] || [ "$only_k" -ne 0 ]; then
        LC_ALL=C comm -3 "$TMP/c" "$TMP/k" | head -n 5 | sed 's/^/    /'
        status=1
    fi
    cat "$TMP/c" >> "$TMP/all"
done
echo "distinct entry names (cuobjdump): $(LC_ALL=C sort -u "$TMP/all" | wc -l)"
[ $status -eq 0 ] && echo "exact: kaudit equals cuobjdump on every library" || echo "FAILED: differences above"
exit $status
