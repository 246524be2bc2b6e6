"""Task linear: nn.Linear(1024, 1024) on x [1024, 1024], fp32."""
import torch
import torch.nn as nn

BATCH = IN_FEATURES = OUT_FEATURES = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(IN_FEATURES, OUT_FEATURES)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return []
