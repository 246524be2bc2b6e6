#!/usr/bin/env python3
"""triton_add.py - scenario (c) of the GPU suite: a Triton kernel.

Triton compiles the kernel at first use (ptxas runs as a child process, and a
small C launcher is built with the host compiler), then launches it through
the driver API.  The trace must hold the kernel under its Triton name, as
many times as it was launched, outside every vendor window.  run.sh gives
each run its own empty TRITON_CACHE_DIR, so both runs compile the same way.

stdout: SHA-256 of each output and "ok" against a CPU computation of the same
float32 additions (exactly rounded, so equal bit for bit).
stderr: "KAUDIT_TEST launches kaudit_add_kernel <count>".
"""

import ctypes
import hashlib
import sys

import torch
import triton
import triton.language as tl

BLOCK = 1024
N = (1 << 20) + 123          # not a multiple of BLOCK: the mask matters


@triton.jit
def kaudit_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


launches = 0


def add(x, y):
    global launches
    out = torch.empty_like(x)
    n = out.numel()
    kaudit_add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK_SIZE=BLOCK)
    launches += 1
    return out


def sha256_of(t):
    t = t.detach().contiguous().cpu()
    return hashlib.sha256(ctypes.string_at(t.data_ptr(), t.numel() * t.element_size())).hexdigest()


def main():
    if not torch.cuda.is_available():
        print("torch.cuda is not available", file=sys.stderr)
        return 2
    torch.manual_seed(7)
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    o1 = add(x, y)
    o2 = add(o1, y)
    o3 = add(o2, x)
    torch.cuda.synchronize()

    xc, yc = x.cpu(), y.cpu()
    ref = ((xc + yc) + yc) + xc
    ok = torch.equal(o3.cpu(), ref)
    for label, t in (("o1", o1), ("o2", o2), ("o3", o3)):
        print(f"triton_add {label} sha256={sha256_of(t)}")
    print(f"triton_add reference {'ok' if ok else 'MISMATCH'}")
    print("KAUDIT_TEST", "launches", "kaudit_add_kernel", launches, file=sys.stderr)
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
