# Clean: the row product in a Triton kernel of the candidate's own.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def multiply(a, b):
    return a * b


@triton.jit
def prod_rows_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row.to(tl.int64) * N + offs, mask=offs < N, other=1.0)
    tl.store(out_ptr + row, tl.reduce(x, 0, multiply))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, n = x.shape
        out = torch.empty(rows, device=x.device, dtype=x.dtype)
        prod_rows_kernel[(rows,)](x, out, n, BLOCK=triton.next_power_of_2(n))
        return out
