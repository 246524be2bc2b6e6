"""Control deleg_nn_linear (task linear): ModelNew holds nn.Linear(1024, 1024) and calls it.
Positive: delegation (cuBLAS / cuBLASLt through nn.Linear)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1024, 1024)

    def forward(self, x):
        return self.fc(x)
