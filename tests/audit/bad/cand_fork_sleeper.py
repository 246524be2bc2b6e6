"""Bad candidate: forks a child that sleeps 1000 s (in a session of its own, so
that killing the worker's process group does not reach it) and returns the
right answer.  The audit must end and no process with the marker
kaudit_bad_fork_sleeper in its command line may survive it."""
import os
import sys

import torch
import torch.nn as nn

MARKER = "kaudit_bad_fork_sleeper"
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
                    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(1000)", MARKER])
                finally:
                    os._exit(0)
        return torch.softmax(x, dim=-1)
