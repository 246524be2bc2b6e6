# Delegation (issue 13, item 1): the selection handed back to torch.topk.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.topk(x, self.k, dim=1).values
