#!/bin/sh
# tests/cli_hardening.sh KAUDIT SOURCE_DIR - issue 14: what a hostile program
# (same user, can write the session directory) plants there is never followed
# by a writer, and a FIFO given or planted as an input is refused at once with
# a message naming it, never waited on.
RUN_TIMEOUT=20
. "$(dirname "$0")/cli_env.sh"
failed() { r=$(cat "$T/rc"); [ "$r" != 0 ] && [ "$r" != 124 ] && [ "$r" != 137 ]; }
victim_intact() { cmp -s "$T/victim" "$T/victim.orig"; }

printf 'precious\n' >"$T/victim"
cp "$T/victim" "$T/victim.orig"

# (a) kaudit run: an old session in S (so --overwrite clears it and the writers
# run), a planted .info.tmp before the run, and .info.tmp and kaudit.log
# planted while the program runs.  The program itself cannot plant them where
# the session is read-only for it (tests/cli_protect.sh); they are planted
# from outside, as a process outside its namespace could.
S=$T/s
run run -d "$S" -- true
check "first run: exit 0" rc 0
ln -s "$T/victim" "$S/.info.tmp"
# run_planting CMD...: kaudit run while this shell plants, 0.3 s in
run_planting() {
    "$K" run -d "$S" --overwrite -- sh -c "sleep 0.8; echo out" >"$T/out" 2>"$T/err" &
    _pid=$!
    sleep 0.3
    "$@"
    wait $_pid
    echo $? >"$T/rc"
}
run_planting sh -c "ln -sf '$T/victim' '$S/.info.tmp'; ln -sf '$T/victim' '$S/kaudit.log'"
check "planted symlinks: the program's exit status" rc 0
check "planted symlinks: the program's output is its own" sh -c "[ \"\$(cat '$T/out')\" = out ]"
check "planted .info.tmp/kaudit.log: the victim is unchanged" victim_intact
check "planted symlinks: info is a regular file" sh -c "[ -f '$S/info' ] && [ ! -L '$S/info' ]"
check "planted symlinks: the run is recorded to its end" grep -q '^status: exited 0' "$S/info"
check "planted kaudit.log: said on kaudit's stderr" err_has "kaudit.log' is a symbolic link; not followed"

# A directory planted as .info.tmp while the program runs: info is still
# rewritten at the end (through another temporary name).
run_planting sh -c "rm -f '$S/.info.tmp'; mkdir '$S/.info.tmp'"
check "planted .info.tmp directory: the program's exit status" rc 0
check "planted .info.tmp directory: the run is recorded to its end" grep -q '^status: exited 0' "$S/info"
check "planted .info.tmp directory: said in kaudit.log" grep -q "info.tmp.*instead" "$S/kaudit.log"
rmdir "$S/.info.tmp"

# -d a symlink to a directory is refused; a non-empty directory without a
# session is used with a warning.
mkdir "$T/real"
ln -s "$T/real" "$T/link"
run run -d "$T/link" -- true
check "-d a symlink: exit 1" rc 1
check "-d a symlink: said" err_has "is a symbolic link"
check "-d a symlink: nothing written there" sh -c "[ -z \"\$(ls -A '$T/real')\" ]"
mkdir "$T/full"; echo x >"$T/full/notes"
run run -d "$T/full" -- true
check "-d a non-empty directory: runs" rc 0
check "-d a non-empty directory: warned" err_has "is not empty and holds no session"

# (b) analyze --save through a planted analysis.json symlink.
SESSION=$T/session
cp -r "$SRC/examples/h200-side-stream/session" "$SESSION"
mkdir "$T/c"
cp "$SRC/contracts/examples/side-stream.json" "$T/c/side.json"
run contract pin "$T/c/manifest.json" "$T/c/side.json"
check "pin: exit 0" rc 0
ln -s "$T/victim" "$SESSION/analysis.json"
run analyze "$SESSION" --contract "$T/c/side.json" --save
check "analyze --save: the victim is unchanged" victim_intact
check "analyze --save: analysis.json is a regular file" sh -c "[ -f '$SESSION/analysis.json' ] && [ ! -L '$SESSION/analysis.json' ]"

# (c) FIFOs as inputs: refused at once, named.
mkfifo "$T/fifo"
run analyze "$SESSION" --contract "$T/fifo"
check "FIFO as --contract: fails, no hang" failed
check "FIFO as --contract: named" err_has "'$T/fifo' is not a regular file (a FIFO)"
run analyze "$SESSION" --contract "$T/c/side.json" --inventory "$T/fifo"
check "FIFO as --inventory: fails, no hang" failed
check "FIFO as --inventory: named" err_has "'$T/fifo' is not a regular file (a FIFO)"
run analyze "$SESSION" --contract "$T/c/side.json" --manifest "$T/fifo"
check "FIFO as --manifest: fails, no hang" failed
check "FIFO as --manifest: named" err_has "'$T/fifo' is not a regular file (a FIFO)"
rm -f "$SESSION/analysis.json"
mkfifo "$SESSION/analysis.json"
run report "$SESSION"
check "FIFO planted as analysis.json: report fails, no hang" failed
check "FIFO planted as analysis.json: named" err_has "analysis.json' is not a regular file (a FIFO)"
rm -f "$SESSION/analysis.json"
mv "$SESSION/info" "$T/info.saved"
mkfifo "$SESSION/info"
run report "$SESSION" --contract "$T/c/side.json"
check "FIFO planted as info: fails, no hang" failed
check "FIFO planted as info: named" err_has "info' is not a regular file (a FIFO)"

finish cli_hardening
