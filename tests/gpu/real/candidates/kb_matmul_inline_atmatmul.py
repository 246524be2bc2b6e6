# Delegates under KernelBench's evaluator with build_dir set: a load_inline
# extension whose C++ calls torch::matmul, so cuBLAS does the GEMM for a
# library built in the run (the vendor call's caller is the candidate's .so).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

torch::Tensor gemm(torch::Tensor A, torch::Tensor B) {
    return torch::matmul(A.contiguous(), B.contiguous());
}
"""

module = load_inline(name="kaudit_kb_atmatmul", cpp_sources=source, functions=["gemm"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return module.gemm(A, B)
