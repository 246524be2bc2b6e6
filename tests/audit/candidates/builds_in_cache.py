"""Negative (task softmax): builds_in_cache. Semantic PASS.

Builds a C helper the way PyTorch's load_inline builds an extension, without
PyTorch's headers (which the CPU machines lack): in its own folder beneath
TORCH_EXTENSIONS_DIR, its source and its build file written only when their
text changes (PyTorch's _maybe_write), the build file naming the folder by
its absolute path (as build.ninja does), and make rebuilding only what is
older than its inputs (as ninja does).  It loads the library and calls it.

An audit that finds an earlier audit's build of this candidate at the same
path (the build store, docs/audit.md "Builds kept across audits") runs no
compiler; one that finds it at another path rebuilds (tests/audit_build_store.sh).
"""
import ctypes
import os
import subprocess

import torch
import torch.nn as nn

SOURCE = "int kaudit_helper(int x) { return x + 1; }\n"


def _maybe_write(path, text):
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def _build():
    folder = os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "kaudit_helper")
    os.makedirs(folder, exist_ok=True)
    _maybe_write(os.path.join(folder, "helper.c"), SOURCE)
    _maybe_write(os.path.join(folder, "Makefile"),
                 "B := %s\n$(B)/helper.so: $(B)/helper.c $(B)/Makefile\n"
                 "\tcc -O2 -shared -fPIC $(B)/helper.c -o $(B)/helper.so\n" % folder)
    subprocess.run(["make", "-s", "-C", folder], check=True)
    return ctypes.CDLL(os.path.join(folder, "helper.so"))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        if _build().kaudit_helper(1) != 2:
            raise RuntimeError("the helper library does not compute")

    def forward(self, x):
        m = x.max(dim=-1, keepdim=True).values
        e = (x - m).exp()
        return e / e.sum(dim=-1, keepdim=True)
