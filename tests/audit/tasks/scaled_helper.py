"""Audit task scaled_helper: x * 2 on x [64, 512], fp32, where the 2 comes
from a C helper the reference builds at construction the way PyTorch's
load_inline builds an extension (as tests/audit/candidates/builds_in_cache.py
does, without PyTorch's headers, which the CPU machines lack): in its own
folder beneath TORCH_EXTENSIONS_DIR, its source and build file written only
when their text changes, make rebuilding only what is older than its inputs
(ninja's rule).  It stands for every reference whose code is compiled at run
time and reused from a cache folder: load_inline, Triton, Inductor,
PyTorch's jiterator (torch.prod), the driver's PTX cache.  The victim of
tests/audit/attacks/store/poison_reference_build.py."""
import ctypes
import os
import subprocess

import torch
import torch.nn as nn

BATCH, DIM = 64, 512
SOURCE = "double kaudit_ref_scale(void) { return 2.0; }\n"


def _maybe_write(path, text):
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def build_helper():
    folder = os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "kaudit_ref_scale")
    os.makedirs(folder, exist_ok=True)
    _maybe_write(os.path.join(folder, "scale.c"), SOURCE)
    _maybe_write(os.path.join(folder, "Makefile"),
                 "B := %s\n$(B)/scale.so: $(B)/scale.c $(B)/Makefile\n"
                 "\tcc -O2 -shared -fPIC $(B)/scale.c -o $(B)/scale.so\n" % folder)
    subprocess.run(["make", "-s", "-C", folder], check=True)
    lib = ctypes.CDLL(os.path.join(folder, "scale.so"))
    lib.kaudit_ref_scale.restype = ctypes.c_double
    return lib


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = float(build_helper().kaudit_ref_scale())

    def forward(self, x):
        return x * self.scale


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
