"""Negative (task softmax): compiles_helper. Semantic PASS.

Compiles a C file with the system's compiler in its working directory when
built (a build of its own, as load_inline's ninja and nvcc are on a GPU
machine, without PyTorch's headers, which the CPU machines lack), then
computes a stable softmax.  The record's builds name the compiler and its
own wall time; a batch's ledger line sums them (build_tools_s) and its
summary gives each tool's median (tests/audit_cli.sh).
"""
import os
import subprocess

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        os.makedirs("helper_build", exist_ok=True)
        with open(os.path.join("helper_build", "helper.c"), "w") as f:
            f.write("int kaudit_helper(int x) { return x + 1; }\n")
        subprocess.run(["cc", "-O2", "-c", "helper.c", "-o", "helper.o"], cwd="helper_build", check=True)

    def forward(self, x):
        m = x.max(dim=-1, keepdim=True).values
        e = (x - m).exp()
        return e / e.sum(dim=-1, keepdim=True)
