# Clean: the k largest values of each row in a Triton kernel of the
# candidate's own (k passes of a row maximum, each knocking out its element).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def topk_rows_kernel(x_ptr, out_ptr, N, K: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row.to(tl.int64) * N + offs, mask=offs < N, other=float("-inf"))
    for i in tl.static_range(K):
        best = tl.max(x, 0)
        tl.store(out_ptr + row * K + i, best)
        x = tl.where(offs == tl.argmax(x, 0), float("-inf"), x)


class ModelNew(nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, n = x.shape
        out = torch.empty(rows, self.k, device=x.device, dtype=x.dtype)
        topk_rows_kernel[(rows,)](x, out, n, K=self.k, BLOCK=triton.next_power_of_2(n))
        return out
