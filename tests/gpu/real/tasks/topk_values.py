# A KernelBench-format reference of ours (KernelBench's level 1 has no top-k):
# the 8 largest values of each row, largest first.  torch.topk on the H200
# launches selection and sort kernels whose names no class table knows
# (gatherTopK even reads as glue): the task that shows what the ATen operator
# ranges add to names (issue 13, item 1).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.topk(x, self.k, dim=1).values


batch_size = 4096
dim = 2048


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [8]
