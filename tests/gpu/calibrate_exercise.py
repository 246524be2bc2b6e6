"""calibrate_exercise.py - exercise cuBLAS, cuBLASLt and cuDNN broadly, for
`kaudit inventory calibrate` (issue 3, item 3b).

Run under `kaudit run`: every kernel launched inside a vendor call's window is
a vendor kernel, whether or not its name exists in any library file (cuBLASLt
names nvjet_* kernels at run time; cuDNN compiles some engines with NVRTC).
The workload: GEMMs across dtypes, transposes, shapes, batching and bias
epilogues; GEMV; convolutions forward and backward across dtypes, layouts,
groups, dilation, 1-d/2-d/3-d and transposed, with cudnn.benchmark so that
cuDNN tries many engines, runtime-compiled ones included.
stdout: one line of counts.
"""
import itertools
import sys

import torch
import torch.nn.functional as F


def gemms(dev):
    n = 0
    for dtype, tf32 in ((torch.float32, False), (torch.float32, True), (torch.float16, False),
                        (torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for m, k, nn in ((64, 64, 64), (128, 512, 256), (1024, 1024, 1024), (77, 129, 33),
                         (8, 4096, 8), (4096, 64, 4096)):
            a = torch.randn(m, k, device=dev, dtype=dtype)
            b = torch.randn(k, nn, device=dev, dtype=dtype)
            _ = a @ b
            _ = b.t() @ a.t()                             # transposed operands
            _ = a.t().contiguous().t() @ b
            bias = torch.randn(nn, device=dev, dtype=dtype)
            _ = F.linear(a, b.t(), bias)                  # cuBLASLt bias epilogue
            _ = torch.addmm(bias, a, b)
            _ = F.gelu(F.linear(a, b.t(), bias))
            x = torch.randn(4, m, k, device=dev, dtype=dtype)
            y = torch.randn(4, k, nn, device=dev, dtype=dtype)
            _ = torch.bmm(x, y)
            _ = torch.baddbmm(torch.randn(4, m, nn, device=dev, dtype=dtype), x, y)
            _ = a @ torch.randn(k, device=dev, dtype=dtype)  # GEMV
            n += 10
    torch.backends.cuda.matmul.allow_tf32 = False
    return n


def convs(dev):
    n = 0
    torch.backends.cudnn.benchmark = True
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for (c, k, hw, ks, groups, dil, stride) in ((3, 16, 32, 3, 1, 1, 1), (16, 32, 28, 3, 1, 1, 2),
                                                    (32, 32, 14, 3, 32, 1, 1), (16, 16, 28, 3, 1, 2, 1),
                                                    (64, 128, 7, 1, 1, 1, 1), (8, 8, 56, 5, 2, 1, 1)):
            for channels_last in (False, True):
                x = torch.randn(4, c, hw, hw, device=dev, dtype=dtype, requires_grad=True)
                w = torch.randn(k, c // groups, ks, ks, device=dev, dtype=dtype, requires_grad=True)
                if channels_last:
                    x = x.detach().to(memory_format=torch.channels_last).requires_grad_()
                    w = w.detach().to(memory_format=torch.channels_last).requires_grad_()
                y = F.conv2d(x, w, padding=dil * (ks // 2), groups=groups, dilation=dil, stride=stride)
                y.float().sum().backward()                # backward data and filter
                n += 3
        x1 = torch.randn(4, 8, 64, device=dev, dtype=dtype)
        _ = F.conv1d(x1, torch.randn(16, 8, 3, device=dev, dtype=dtype), padding=1)
        x3 = torch.randn(2, 4, 8, 8, 8, device=dev, dtype=dtype)
        _ = F.conv3d(x3, torch.randn(8, 4, 3, 3, 3, device=dev, dtype=dtype), padding=1)
        xt = torch.randn(4, 16, 14, 14, device=dev, dtype=dtype)
        _ = F.conv_transpose2d(xt, torch.randn(16, 8, 4, 4, device=dev, dtype=dtype), stride=2)
        n += 3
    return n


def main():
    if not torch.cuda.is_available():
        print("torch.cuda is not available", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    dev = "cuda"
    g = gemms(dev)
    c = convs(dev)
    torch.cuda.synchronize()
    print(f"calibration workload: {g} GEMM-family and {c} convolution-family calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
