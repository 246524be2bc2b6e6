#!/bin/sh
# tests/cli_run.sh KAUDIT - `kaudit run` on bad input and on the command's
# own exit: clear messages, the right exit statuses, a session whose info
# says the run did not start, and nothing added to the command's output.
. "$(dirname "$0")/cli_env.sh"
run() { "$K" run "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; } # kaudit run ARGS

run --bogus -- true
check "unknown option: exit 2" rc 2
check "unknown option: named" err_has "kaudit: error: unknown option '--bogus'"
check "unknown option: a one-line hint, not the whole help" sh -c "[ \$(wc -l <'$T/err') = 2 ] && grep -qx 'usage: kaudit run \[options\] -- CMD \[ARGS...\] (kaudit run --help for more)' '$T/err'"

run
check "no command: exit 2" rc 2
check "no command: said" err_has "kaudit: error: no command to run"

run -d /proc/kaudit-no-such-dir -- true
check "unwritable dir: exit 1" rc 1
check "unwritable dir: named" err_has "cannot create session directory '/proc/kaudit-no-such-dir'"

run -d "$T/s1" -- kaudit-no-such-command
check "missing command: exit 127" rc 127
check "missing command: named" err_has "cannot run 'kaudit-no-such-command': command not found"
check "missing command: info says not started" grep -q '^status: not started: command not found' "$T/s1/info"

printf 'x' >"$T/notexec"
run -d "$T/s2" -- "$T/notexec"
check "not executable: exit 126" rc 126
check "not executable: info says not started" grep -q '^status: not started' "$T/s2/info"

run -d "$T/s3" -- sh -c 'echo hi; echo oops >&2; exit 3'
check "exit status passed through" rc 3

check "stdout untouched" [ "$(cat "$T/out")" = hi ]
check "stderr untouched" [ "$(cat "$T/err")" = oops ]
check "info says exited 3" grep -q '^status: exited 3' "$T/s3/info"

run -d "$T/s3" -- true
check "existing session kept: exit 1" rc 1
check "existing session kept: said" err_has "already holds a session"
run -d "$T/s3" --overwrite -- true
check "--overwrite replaces it" rc 0

run --exact-event-times -d "$T/s-exact" -- sh -c 'echo "exact=$KAUDIT_EXACT_EVENT_TIMES"'
check "--exact-event-times reaches the command's environment" grep -qx 'exact=1' "$T/out"

run -d "$T/s4" -- sh -c 'kill -9 $$'
check "killed by signal 9: exit 137" rc 137
check "killed by signal 9: said" err_has "was killed by signal 9"
check "info says signal 9" grep -q '^status: signal 9' "$T/s4/info"

# Without -d: never refused because an earlier run left its session here;
# kaudit.session, then kaudit-2.session, each named on kaudit's stderr.
mkdir -p "$T/numbered"
(cd "$T/numbered" && "$K" run -- true >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
check "first run without -d: exit 0" rc 0
check "first run without -d: kaudit.session written" test -f "$T/numbered/kaudit.session/info"
check "first run without -d: named" err_has "kaudit: note: session written to kaudit.session"
(cd "$T/numbered" && "$K" run -- sh -c 'echo second' >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
check "second run without -d: exit 0" rc 0
check "second run without -d: kaudit-2.session written" test -f "$T/numbered/kaudit-2.session/info"
check "second run without -d: named" err_has "kaudit: note: session written to kaudit-2.session"
check "second run without -d: stdout untouched" [ "$(cat "$T/out")" = second ]
check "two runs, two different sessions" sh -c '! cmp -s "$1/kaudit.session/info" "$1/kaudit-2.session/info"' - "$T/numbered"
check "the first session is kept" grep -q '^status: exited 0' "$T/numbered/kaudit.session/info"

finish
