"""Bad candidate (task softmax): fills the memory when imported.

It allocates and touches 64 MiB a step, up to 4 GiB, a step every 20 ms,
then computes a correct softmax.  Left alone it holds what it took for the
rest of the audit; a candidate that did not stop would have the kernel's
OOM killer choose a victim, perhaps kaudit or the batch writing its ledger.
With --memory-limit 1G (tests/audit_cli.sh) the worker is stopped once its
processes hold more than that: INCONCLUSIVE, runner-resource-limit."""
import time

import torch
import torch.nn as nn

STEP = 64 << 20
held = []
for _ in range(64):
    chunk = bytearray(STEP)
    chunk[::4096] = b"\1" * (STEP // 4096)   # every page touched: resident, not just reserved
    held.append(chunk)
    time.sleep(0.02)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)
