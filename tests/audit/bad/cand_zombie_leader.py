"""Bad candidate: forks a child in a session of its own whose main thread
then ends alone (the raw exit system call, not exit_group) while a second
thread lives on, and returns the right answer.  /proc/PID/stat then says
the process is a zombie ('Z', the state of its first thread), though it
still runs: a killer that skips zombies leaves it alive after the audit
(shown on the tree before the fix, by a hostile candidate of the build
store's review, which grew a file while kaudit copied it).  The audit must
end and no thread whose command line carries kaudit_bad_zombie_leader may
survive it."""
import os
import sys

import torch
import torch.nn as nn

MARKER = "kaudit_bad_zombie_leader"
CHILD = r"""
import ctypes, platform, threading, time
threading.Thread(target=time.sleep, args=(1000,)).start()
time.sleep(0.2)
# the main thread only: SYS_exit (60 on x86-64, 93 on arm64), not exit_group
ctypes.CDLL(None).syscall({"aarch64": 93}.get(platform.machine(), 60), 0)
"""
_forked = False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        global _forked
        if not _forked:
            _forked = True
            if os.fork() == 0:
                try:
                    os.setsid()
                    os.execv(sys.executable, [sys.executable, "-c", CHILD, MARKER])
                finally:
                    os._exit(0)
        return torch.softmax(x, dim=-1)
