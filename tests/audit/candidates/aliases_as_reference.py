"""Negative (task relu_inplace): aliases_as_reference. Must PASS.

Clamps its input in place and returns it, exactly as the reference
(torch.relu_) does: its output aliases its input and it mutates the input,
so a later call that refills the input overwrites the earlier output.  The
reference's own repeated calls do the same, so neither the mutation nor the
aliasing convicts (docs/audit.md, "The schedule": judged against the
reference).
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.clamp_(min=0.0)
