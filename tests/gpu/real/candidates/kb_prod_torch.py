# Delegation (issue 13, class 3): the product handed back to torch.prod, whose
# jiterator kernel PyTorch compiles and loads itself (no candidate object).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)
