"""tests/python/preimport_check.py RUNNER_DIR - kaudit_probe.Preimport imports
its module while a build waits on its compilers, in a thread of its own, and
is done when the build returns; with no build, at finish(); never with
KAUDIT_PROBE_PREIMPORT=off; and it puts PyTorch's ninja step back.  The
runner's guess of a build (kaudit_party_link.builds_expected) reads the
candidate's text.  A slow
module stands in for torch._dynamo (PyTorch 1.x has none), a subprocess
that sleeps for ninja."""
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, sys.argv[1])
import kaudit_probe  # noqa: E402

fails = 0


def check(what, ok):
    global fails
    print(("ok: " if ok else "FAIL: ") + what)
    fails += not ok


mods = tempfile.mkdtemp()
sys.path.insert(0, mods)
for name in ("slow_during", "slow_after", "slow_raised", "slow_off"):
    with open(os.path.join(mods, name + ".py"), "w") as f:
        f.write("import threading, time\nthread = threading.current_thread().name\n"
                "began = time.monotonic()\ntime.sleep(0.3)\n")

seen = {}


def build(name, code=0):
    """A ninja run: a child the main thread waits on; what it saw of the import."""
    try:
        subprocess.run(["sh", "-c", "sleep 1; exit %d" % code], check=True)
    finally:
        seen[name] = time.monotonic()


p = kaudit_probe.Preimport("slow_during")
p.during(build)("slow_during")
got = p.finish()
check("the import began before the build's child ended", sys.modules["slow_during"].began < seen["slow_during"])
check("imported in a thread of its own", sys.modules["slow_during"].thread == "kaudit-preimport")
check("reported as during the build", got and got.get("when") == "during-build" and "error" not in got)
check("done when the build returned", p.thread is not None and not p.thread.is_alive())
check("only the main thread left", threading.active_count() == 1)

p = kaudit_probe.Preimport("slow_after")
got = p.finish()
check("no build: imported at finish(), in this thread",
      got and got.get("when") == "after-stages" and sys.modules["slow_after"].thread == "MainThread")

p = kaudit_probe.Preimport("slow_raised")
try:
    p.during(build)("slow_raised", 3)
    check("a failed build still raises", False)
except subprocess.CalledProcessError:
    check("a failed build still raises", True)
check("a failed build: the import waited for", "slow_raised" in sys.modules and not p.thread.is_alive())

os.environ["KAUDIT_PROBE_PREIMPORT"] = "off"
p = kaudit_probe.Preimport("slow_off")
p.during(build)("slow_off")
check("off: nothing imported, nothing reported", p.finish() is None and "slow_off" not in sys.modules)
del os.environ["KAUDIT_PROBE_PREIMPORT"]

check("absent module: nothing wanted", kaudit_probe.Preimport("no_such_module_kaudit").finish() is None)

for name in ("slow_ready",):
    with open(os.path.join(mods, name + ".py"), "w") as f:
        f.write("")
p = kaudit_probe.Preimport("slow_ready")
got = p.finish("before-ready")
check("before ready: imported, reported so", got and got.get("when") == "before-ready")
check("imported already: no ninja step wrapped", p.install() is None)

import kaudit_party_link  # noqa: E402
src = os.path.join(mods, "cand.py")
for text, want in (("from torch.utils.cpp_extension import load_inline\n", True),
                   ("import torch.utils.cpp_extension as e\n", True),
                   ("import triton\n", False), ("", False)):
    with open(src, "w") as f:
        f.write(text)
    check("builds expected of %r: %s" % (text, want), kaudit_party_link.builds_expected(src) is want)
check("no such file: none expected", kaudit_party_link.builds_expected(os.path.join(mods, "none.py")) is False)

import torch.utils.cpp_extension as ext  # noqa: E402
original = ext._run_ninja_build
p = kaudit_probe.Preimport("slow_during")
restore = p.install()
check("install wraps PyTorch's ninja step", restore is original and ext._run_ninja_build is not original)
p.uninstall(restore)
check("uninstall puts it back", ext._run_ninja_build is original)

sys.exit(1 if fails else 0)
