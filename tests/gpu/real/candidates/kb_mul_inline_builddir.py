# Clean under KernelBench's evaluator with build_dir set: the scalar multiply in
# a CUDA kernel of the candidate's own, built by load_inline.  KernelBench sets
# TORCH_EXTENSIONS_DIR to its build_dir, so the extension lands under a folder
# that matches no path pattern: kaudit must know it from the build itself.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

__global__ void scale_kernel(const float* x, float* out, float s, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * s;
}

torch::Tensor scale(torch::Tensor x, double s) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    long n = xc.numel();
    int threads = 256;
    long blocks = (n + threads - 1) / threads;
    scale_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), (float)s, n);
    return out;
}
"""

module = load_inline(name="kaudit_kb_scale", cpp_sources="torch::Tensor scale(torch::Tensor x, double s);",
                     cuda_sources=source, functions=["scale"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return module.scale(A, s)
