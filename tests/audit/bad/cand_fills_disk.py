"""Bad candidate (task softmax): fills the disk when imported.

It writes 64 MiB files into its working directory, up to 4 GiB, one every
20 ms, then computes a correct softmax.  A candidate that did not stop
would leave no room for the records of its own audit and of the batch's
others.  With --disk-limit 512M (tests/audit_cli.sh) the worker is stopped
once the audit's directory takes more than that: INCONCLUSIVE,
runner-resource-limit."""
import os
import time

import torch
import torch.nn as nn

STEP = 64 << 20
block = os.urandom(1 << 20)
for i in range(64):
    with open("kaudit_bad_fill_%02d.bin" % i, "wb") as f:
        for _ in range(STEP >> 20):
            f.write(block)
    time.sleep(0.02)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)
