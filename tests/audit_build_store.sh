#!/bin/sh
# tests/audit_build_store.sh KAUDIT PYTHON SRCDIR - builds kept across audits
# of one candidate (docs/audit.md, "Builds kept across audits";
# audit/build_store.h).  CPU audits of tests/audit/candidates/builds_in_cache.py,
# which builds the way load_inline does (make in place of ninja): the first
# audit builds and keeps its builds, the next starts from them at the same
# path and runs no compiler; --build-store off; a hostile candidate's entry
# (tests/audit/attacks/store/store_poison.py) never reaches another candidate and
# carries no lock, link, pipe or second name; an entry under the same name
# that is not this candidate's is a miss; an entry that cannot be copied
# whole is not used at all; the store's size evicts the entry used longest
# ago; a store others may write to is not used; a batch's ledger and summary.
NAME=audit_build_store
. "$(dirname "$0")/audit_env.sh"
T=$(mktemp -d)
chmod 711 "$T"
trap 'rm -rf "$T"' EXIT
fails=0
check() { # WHAT COMMAND...
    _what=$1; shift
    if "$@"; then echo "ok: $_what"; else echo "FAIL: $_what"; fails=$((fails + 1)); fi
}
REF=$SRC/tests/audit/tasks/softmax.py CON=$SRC/tests/audit/contracts/softmax.json
HONEST=$SRC/tests/audit/candidates/builds_in_cache.py POISON=$SRC/tests/audit/attacks/store/store_poison.py
audit() { # NAME CANDIDATE ARGS...: one audit into $T/NAME
    name=$1 cand=$2; shift 2
    timeout 120 "$K" audit --device cpu --reference "$REF" --candidate "$cand" --contract "$CON" -d "$T/$name" \
        --quiet "$@" >"$T/$name.out" 2>"$T/$name.err"
    echo "  $name: exit $?"
}
field() { jget "$T/$1/record.json" "$2"; }
state() { field "$1" "r['build_store']['state']"; }
compiled() { # NAME: True when a build of the record ran cc
    field "$1" "any('cc' in b['tools'] for b in r['builds'])"
}
semantic() { field "$1" "r['axes']['semantic']['verdict']"; }

# 1. cold, then warm: the same path, no compiler the second time
audit cold "$HONEST" --build-store "$T/s1"
check "cold: a miss, its builds kept" [ "$(field cold "(r['build_store']['state'], r['build_store']['kept'])")" = "('miss', True)" ]
check "cold: it ran cc" [ "$(compiled cold)" = True ]
check "cold: its build folder is at the fixed path" \
    [ "$(field cold "any(b['folder'].startswith(r['build_store']['worker_sees_cache_at'] + '/torch_extensions/') for b in r['builds'])")" = True ]
check "cold: semantic PASS" [ "$(semantic cold)" = PASS ]
KEY=$(field cold "r['build_store']['entry']")
check "cold: the entry holds the library" [ -f "$T/s1/$KEY/cache/torch_extensions/kaudit_helper/helper.so" ]
check "cold: the store is private" [ "$(stat -c %a "$T/s1")" = 700 ]
audit warm "$HONEST" --build-store "$T/s1"
check "warm: a hit, files copied in" [ "$(field warm "(r['build_store']['state'], r['build_store']['copied_in_files'] > 0)")" = "('hit', True)" ]
check "warm: no cc ran" [ "$(compiled warm)" = False ]
check "warm: semantic PASS" [ "$(semantic warm)" = PASS ]
check "warm: the entry is not replaced" [ "$(field warm "r['build_store']['kept']")" = False ]

# 2. off: the real folder, a build of its own
audit off "$HONEST" --build-store off
check "off: state off, cc ran" [ "$(field off "r['build_store']['state']") $(compiled off)" = "off True" ]
check "off: its build folder is in its audit directory" \
    [ "$(field off "any(b['folder'].startswith(r['audit_dir'] + '/cache/') for b in r['builds'])")" = True ]

# 3. a hostile candidate's entry: nothing planted carried, never another candidate's
audit poison "$POISON" --build-store "$T/s2"
PKEY=$(field poison "r['build_store']['entry']")
P=$T/s2/$PKEY/cache/torch_extensions/kaudit_helper
check "poison: kept, with what it planted left out" [ "$(field poison "r['build_store']['kept'] and r['build_store']['left_out'] >= 4")" = True ]
none_planted() { [ ! -e "$P/lock" ] && [ ! -L "$P/secret" ] && [ ! -e "$P/pipe" ] && [ ! -e "$P/twice" ] && [ ! -e "$P/twice2" ]; }
check "poison: no lock, link, pipe or twice-named file in its entry" none_planted
check "poison: but its library is" [ -f "$P/helper.so" ]
audit victim "$HONEST" --build-store "$T/s2"
check "victim: a miss, not the attacker's entry" [ "$(state victim)" = miss ]
check "victim: its own build, semantic PASS" [ "$(compiled victim) $(semantic victim)" = "True PASS" ]

# 3b. the same audit directory, audited in again (-d reused): the attacker's
# leftovers there (its cache, its work folder) are gone before the next
# candidate's worker starts, so they neither feed it nor enter its entry
audit reused "$POISON" --build-store "$T/s7"
audit reused "$HONEST" --build-store "$T/s7"
check "reused directory: the next candidate misses, builds its own, semantic PASS" \
    [ "$(state reused) $(compiled reused) $(semantic reused)" = "miss True PASS" ]
check "reused directory: nothing planted came with it" [ "$(field reused "r['build_store']['left_out']")" = 0 ]
check "reused directory: its entry holds its own library" \
    cmp -s "$T/s7/$KEY/cache/torch_extensions/kaudit_helper/helper.so" "$T/reused/cache/torch_extensions/kaudit_helper/helper.so"
audit reused_off "$POISON" --build-store off
audit reused_off "$HONEST" --build-store off
check "reused directory, no store: semantic PASS" [ "$(semantic reused_off)" = PASS ]
mkdir -p "$T/inside/work"
cp "$HONEST" "$T/inside/work/cand.py"
timeout 120 "$K" audit --device cpu --reference "$REF" --candidate "$T/inside/work/cand.py" -d "$T/inside" \
    --quiet >/dev/null 2>"$T/inside.err"
echo $? >"$T/inside.rc"
refused_inside() { [ "$(cat "$T/inside.rc")" = 1 ] && grep -q "audit it from elsewhere" "$T/inside.err" && [ -f "$T/inside/work/cand.py" ]; }
check "a candidate inside the folders an audit empties: refused, and left where it was" refused_inside

# 3c. the reference's own run-time build poisoned through a cache the parties
# shared (tests/audit/attacks/store/poison_reference_build.py, task
# scaled_helper: x * 3 where x * 2 is asked): its planting kept in its entry,
# the next audit's reference loaded the candidate's library (x * 3) and the
# wrong answers were semantic PASS.  With caches of the reference's own, both
# audits are semantic FAIL, and the reference's build is out of its reach.
SREF=$SRC/tests/audit/tasks/scaled_helper.py SPOISON=$SRC/tests/audit/attacks/store/poison_reference_build.py
saudit() { # NAME: an audit of the attack into $T/NAME, store s9
    timeout 120 "$K" audit --device cpu --reference "$SREF" --candidate "$SPOISON" -d "$T/$1" --quiet \
        --build-store "$T/s9" >"$T/$1.out" 2>"$T/$1.err"
    echo "  $1: exit $?"
}
saudit refpoison1
saudit refpoison2
check "reference's build: the second audit started from the first's cache" [ "$(state refpoison2)" = hit ]
check "reference's build: x * 3 is semantic FAIL in the first audit and the next" \
    [ "$(semantic refpoison1) $(semantic refpoison2)" = "FAIL FAIL" ]
reference_builds_own() { # the reference's library, built in its own cache, computes 2
    lib=$T/refpoison2/reference-cache/torch_extensions/kaudit_ref_scale/scale.so
    [ -f "$lib" ] && [ "$("$PY" -c "import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).kaudit_ref_scale
f.restype = ctypes.c_double; print(f())" "$lib")" = 2.0 ]
}
check "reference's build: in its own cache, where it computes 2" reference_builds_own

# 4. the attacker's entry under the honest candidate's name (a hash collision): a miss, not replaced
mkdir -p "$T/s3" && chmod 700 "$T/s3"
cp -a "$T/s2/$PKEY" "$T/s3/$KEY"
audit collision "$HONEST" --build-store "$T/s3"
check "collision: a miss that says why" [ "$(field collision "r['build_store']['state'] == 'miss' and 'not this candidate' in r['build_store']['note']")" = True ]
check "collision: its own build, semantic PASS" [ "$(compiled collision) $(semantic collision)" = "True PASS" ]
check "collision: the entry is left as it was" cmp -s "$T/s3/$KEY/candidate" "$POISON"

# 5. an entry that cannot be copied whole (folders too deep): not used at all
deep=$T/s1/$KEY/cache/torch_extensions/deep
mkdir -p "$deep/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21/22/23/24/25/26/27/28/29/30/31/32/33"
audit partial "$HONEST" --build-store "$T/s1"
check "partial: a miss that says the entry could not be copied" \
    [ "$(field partial "r['build_store']['state'] == 'miss' and 'could not be copied' in r['build_store']['note']")" = True ]
check "partial: its own build, semantic PASS" [ "$(compiled partial) $(semantic partial)" = "True PASS" ]
check "partial: nothing of the entry in its cache" [ ! -e "$T/partial/cache/torch_extensions/deep" ]
rm -rf "$deep"

# 6. the store's size: the entry used longest ago goes (its recorded size
# made 2 MB so that two entries pass a 1M store)
audit small1 "$HONEST" --build-store "$T/s4" --build-store-max 1M
echo 2000000 >"$T/s4/$(field small1 "r['build_store']['entry']")/size"
audit small2 "$POISON" --build-store "$T/s4" --build-store-max 1M
check "size: the second kept evicts the first" [ "$(field small2 "r['build_store']['evicted_entries']")" = 1 ]
gone_and_kept() { [ ! -e "$T/s4/$(field small1 "r['build_store']['entry']")" ] && [ -d "$T/s4/$(field small2 "r['build_store']['entry']")" ]; }
check "size: the first entry is gone, the second is there" gone_and_kept

# 6b. an entry's files and folders bounded and counted as the filesystem does
audit inodes "$SRC/tests/audit/attacks/store/store_inodes.py" --build-store "$T/s8"
check "inodes: 25,000 empty files are not kept, and it says why" \
    [ "$(field inodes "r['build_store']['kept'] is False and 'more than 20000 files' in r['build_store']['keep_note']")" = True ]
check "inodes: nothing left in the store" [ -z "$(ls -A "$T/s8")" ]
size_counts_blocks() { # the entry's recorded size: at least a block for each file and folder
    [ "$(cat "$T/s1/$KEY/size")" -ge $((4096 * $(find "$T/s1/$KEY" | wc -l))) ]
}
check "size: an entry's size counts a block for each file and folder" size_counts_blocks
check "version: the entry's material names kaudit's version" grep -q "^kaudit [0-9]" "$T/s1/$KEY/material"
# what a kaudit killed while keeping or evicting left is cleared by the next keep
mkdir -p "$T/s4/.new-999999999/cache" "$T/s4/.gone-1-2/cache" "$T/s4/.new-$$"
audit cleanup "$HONEST" --build-store "$T/s4"
abandoned_gone() { [ ! -e "$T/s4/.new-999999999" ] && [ ! -e "$T/s4/.gone-1-2" ] && [ -d "$T/s4/.new-$$" ]; }
check "abandoned: a dead process's .new- and any .gone- folder removed, a live one's kept" abandoned_gone
rmdir "$T/s4/.new-$$"

# 7. a store others may write to is not used, and the audit goes on
mkdir -p "$T/s5" && chmod 777 "$T/s5"
audit open "$HONEST" --build-store "$T/s5"
check "open store: unavailable, says why" [ "$(field open "r['build_store']['state'] == 'unavailable' and 'only it may write' in r['build_store']['note']")" = True ]
check "open store: built, semantic PASS" [ "$(compiled open) $(semantic open)" = "True PASS" ]
check "open store: nothing written there" [ -z "$(ls -A "$T/s5")" ]
"$K" audit --device cpu --reference "$REF" --candidate "$HONEST" --build-store-max none >/dev/null 2>"$T/usage.err"
echo $? >"$T/usage.rc"
usage_said() { [ "$(cat "$T/usage.rc")" = 2 ] && grep -q "build-store-max" "$T/usage.err"; }
check "usage: --build-store-max takes a size" usage_said

# 8. a batch: the second audit of the candidate starts from the first's builds
cat >"$T/b.jsonl" <<EOB
{"id": "one", "reference": "$REF", "candidate": "$HONEST", "contract": "$CON"}
{"id": "two", "reference": "$REF", "candidate": "$HONEST", "contract": "$CON"}
EOB
timeout 300 "$K" audit --batch "$T/b.jsonl" -o "$T/b-ledger.jsonl" --jobs 1 --device cpu --build-store "$T/s6" \
    >"$T/b.out" 2>"$T/b.err"
check "batch: exit 0" [ $? = 0 ]
check "batch: the ledger says miss, then hit" \
    [ "$("$PY" -c "import json, sys; print(' '.join(json.loads(l)['build_store'] for l in open(sys.argv[1])))" "$T/b-ledger.jsonl")" = "miss hit" ]
check "batch: its summary counts the audits that started from kept builds" \
    grep -q "1 of 2 audits started from builds kept" "$T/b.err"

[ "$fails" = 0 ] && echo "PASS" || { echo "$fails failed"; exit 1; }
