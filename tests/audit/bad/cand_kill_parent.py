"""Bad candidate: SIGKILLs its parent (the runner, which holds the evidence) in
forward (expected: the confinement refuses the signal, confinement-refused,
INCONCLUSIVE; no process of the audit outlives it)."""
import os
import signal

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        os.kill(os.getppid(), signal.SIGKILL)
        return torch.softmax(x, dim=-1)
