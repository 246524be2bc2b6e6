# A KernelBench-format reference of ours (KernelBench's level 1 has no product
# reduction): torch.prod over the last dimension, which PyTorch runs as a
# jiterator kernel (reduction_prod_kernel) compiled at run time with NVRTC.
# Values near 1, so that the product of 256 of them stays well inside fp32.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


batch_size = 16384
dim = 256


def get_inputs():
    return [torch.rand(batch_size, dim) * 0.02 + 0.99]


def get_init_inputs():
    return [1]
