"""Audit task scratch_tmp: x * 2 on x [64, 512], fp32, by a reference that
keeps a scratch file of each call in its temporary directory (as a JIT's
cache or a profiler does) and takes 50 ms a call, so that its slots are
still being computed when the candidate's process imports the candidate.
The victim of tests/audit/attacks/chmod_reference_tmp.py."""
import os
import tempfile
import time

import torch
import torch.nn as nn

BATCH, DIM = 64, 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        with tempfile.NamedTemporaryFile(dir=tempfile.gettempdir(), prefix="kaudit_scratch_") as f:
            f.write(repr(tuple(x.shape)).encode())
        time.sleep(0.05)
        return x * 2


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
