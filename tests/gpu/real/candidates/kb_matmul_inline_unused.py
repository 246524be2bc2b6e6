# Delegates under KernelBench's evaluator with build_dir set: builds a CUDA
# extension of its own (a scaling kernel) but its forward is torch.matmul;
# none of its own kernels does the GEMM.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

__global__ void scale_kernel(float* x, float s, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

torch::Tensor scale_(torch::Tensor x, double s) {
    long n = x.numel();
    scale_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), (float)s, n);
    return x;
}
"""

module = load_inline(name="kaudit_kb_unused", cpp_sources="torch::Tensor scale_(torch::Tensor x, double s);",
                     cuda_sources=source, functions=["scale_"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        out = torch.matmul(A, B)
        return module.scale_(out, 1.0)
