"""Bad candidate: forward never returns (expected, with --timeout 15: runner-timeout, INCONCLUSIVE)."""
import time

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        while True:
            time.sleep(1)
