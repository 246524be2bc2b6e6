#!/bin/sh
# tests/reinject_python.sh KAUDIT - a Python child started with a scrubbed
# environment (os.execve with only PATH) still gets kaudit's sitecustomize
# and watch list back, the same variables `kaudit run` gave its command
# (session/child_env.h): provenance survives a harness that scrubs.
# Exit 77 (skipped) without python3.
K=$1
command -v python3 >/dev/null 2>&1 || exit 77
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
child='import os, sys; m = sys.modules.get("sitecustomize"); print(os.environ.get("KAUDIT_PYTHON_WATCH"), os.path.dirname(getattr(m, "__file__", "") or "") == os.environ.get("KAUDIT_PYTHON_DIR"))'
"$K" run -d "$T/s" -- python3 -c "import os, sys; os.execve(sys.executable, [sys.executable, '-c', '''$child'''], {'PATH': os.environ['PATH']})" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" != 0 ]; then echo "FAIL: kaudit run exited $rc"; cat "$T/err"; exit 1; fi
if [ "$(cat "$T/out")" != "ModelNew,Model True" ]; then
    echo "FAIL: the scrubbed child printed '$(cat "$T/out")', not 'ModelNew,Model True'"
    exit 1
fi
# (python3 may be a shim that execs several images before Python starts)
if ! "$K" dump "$T/s" | grep -q "m = sys.modules.get.*(preload reinjected)"; then
    echo "FAIL: the scrubbed image's trace is missing or not marked reinjected"; exit 1
fi
echo "1 passed, 0 failed"
