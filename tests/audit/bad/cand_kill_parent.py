"""Bad candidate: SIGKILLs its parent (the recording `kaudit run`) in forward
(expected: runner-ended-early, INCONCLUSIVE; the orphaned runner must not outlive the audit)."""
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
