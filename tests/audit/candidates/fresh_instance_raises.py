"""Negative (task softmax): fresh_instance_raises. Semantic FAIL, by its own
raising only.

A correct softmax whose second instance raises when built: the repeated
slot's calls on a fresh instance B fail before its process loads the inputs
handed for them, so those memory files are never taken.  The next call must
still get its own inputs, not one of the untaken ones queued before it
(kaudit_party.HandedFiles.drain keeps the newest of each name): the only
convicting finding is candidate-raised, never a value mismatch
(tests/audit_cli.sh)."""
import torch
import torch.nn as nn

BUILT = [0]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        BUILT[0] += 1
        if BUILT[0] > 1:
            raise RuntimeError("only one instance of this model can be built")

    def forward(self, x):
        return torch.softmax(x, dim=-1)
