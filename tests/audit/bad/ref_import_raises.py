"""Bad reference: raises while it is imported (expected: reference-failed, INCONCLUSIVE)."""
import torch
import torch.nn as nn

raise RuntimeError("kaudit bad input: this reference raises at import")


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(64, 512)]


def get_init_inputs():
    return []
