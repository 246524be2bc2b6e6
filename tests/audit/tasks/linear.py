"""Audit task linear: nn.Linear(256, 128) with bias on x [64, 256], fp32.

The weights come from the constructor's RNG, so a candidate only matches once
the reference's state_dict has been injected into it."""
import torch
import torch.nn as nn

BATCH, IN_FEATURES, OUT_FEATURES = 64, 256, 128


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
