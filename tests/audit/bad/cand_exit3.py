"""Bad candidate: os._exit(3) in forward, no exception to catch (expected: candidate-process-ended, INCONCLUSIVE)."""
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        os._exit(3)
