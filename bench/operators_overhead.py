"""A launch-bound loop of a watched party (class Model, whose forward
launches three small kernels), for bench/operators_overhead.sh: prints the
mean wall time per call over CALLS calls, after WARMUP calls, with one
synchronize at the end.  Under `kaudit run` the sitecustomize samples
operator ranges in some calls (KAUDIT_PYTHON_OPERATORS)."""
import sys
import time

import torch

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
WARMUP = 50


class Model(torch.nn.Module):
    def forward(self, x):
        return (x * 2.0 + 1.0).relu()


m = Model()
x = torch.randn(1024, device="cuda")
for _ in range(WARMUP):
    m(x)
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(CALLS):
    m(x)
torch.cuda.synchronize()
print("us_per_call %.3f" % ((time.perf_counter() - t0) / CALLS * 1e6))
