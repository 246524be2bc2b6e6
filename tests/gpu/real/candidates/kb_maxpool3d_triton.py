# Clean: max pooling 3D in a Triton kernel of the candidate's own (one output
# element per lane, the K^3 dilated window read with padding as -inf).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def maxpool3d_kernel(x_ptr, out_ptr, total, D, H, W, OD, OH, OW, stride, pad, dil,
                     K: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    ow = offs % OW
    t = offs // OW
    oh = t % OH
    t = t // OH
    od = t % OD
    nc = t // OD
    base = nc * D * H * W
    acc = tl.full([BLOCK], float("-inf"), tl.float32)
    for kd in tl.static_range(K):
        id_ = od * stride - pad + kd * dil
        for kh in tl.static_range(K):
            ih = oh * stride - pad + kh * dil
            for kw in tl.static_range(K):
                iw = ow * stride - pad + kw * dil
                ok = mask & (id_ >= 0) & (id_ < D) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
                v = tl.load(x_ptr + base + (id_ * H + ih) * W + iw, mask=ok, other=float("-inf"))
                acc = tl.maximum(acc, v)
    tl.store(out_ptr + offs, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.k = kernel_size
        self.s = stride if stride is not None else kernel_size
        self.p = padding
        self.d = dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n, c, D, H, W = x.shape

        def out_size(size):
            return (size + 2 * self.p - self.d * (self.k - 1) - 1) // self.s + 1

        OD, OH, OW = out_size(D), out_size(H), out_size(W)
        out = torch.empty((n, c, OD, OH, OW), device=x.device, dtype=x.dtype)
        total = out.numel()
        BLOCK = 256
        maxpool3d_kernel[(triton.cdiv(total, BLOCK),)](x, out, total, D, H, W, OD, OH, OW,
                                                       self.s, self.p, self.d, K=self.k, BLOCK=BLOCK)
        return out
