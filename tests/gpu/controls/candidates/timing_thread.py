"""Control timing_thread (task add): forward returns an empty tensor at once; a Python
thread fills it 20 ms later with the custom add.  The thread is joined at the start of the
next forward (the harness waits for the last one before comparing).  Positive: timing
violation (the work is launched after the stop event, from another thread)."""
import os
import sys
import threading
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import kernels  # noqa: E402  (tests/gpu/controls/kernels.py)

DELAY_S = 0.020


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = kernels.load()
        self.pending = None

    def forward(self, a, b):
        if self.pending is not None:
            self.pending.join()
            self.pending = None
        out = torch.empty_like(a)
        ext = self.ext

        def late():
            time.sleep(DELAY_S)
            out.copy_(ext.add(a, b))

        self.pending = threading.Thread(target=late, name="kaudit-ctrl-late-add")
        self.pending.start()
        return out
