"""Audit task shape_compiled: x * 2 on x [64, 512], fp32, by a C helper the
reference compiles the first time it meets a shape, as Triton and Inductor
specialize a kernel per shape at run time, and reuses while it is up to date
(make, ninja's rule; no PyTorch headers, which the CPU machines lack).  It
compiles where such compilers put their work: a shape whose last size is
even beneath its working directory (build/), any other beneath the
temporary directory (tempfile.gettempdir(), Inductor's default cache root).
The victim of tests/audit/attacks/poison_reference_tmp.py."""
import ctypes
import os
import subprocess
import tempfile
import time

import torch
import torch.nn as nn

BATCH, DIM = 64, 512
SOURCE = "double kaudit_shape_scale(void) { return 2.0; }\n"


def _maybe_write(path, text):
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def folder_for(shape):
    name = "kaudit_shape_" + "x".join(str(s) for s in shape)
    if shape[-1] % 2 == 0:
        return os.path.abspath(os.path.join("build", name))
    return os.path.join(tempfile.gettempdir(), name)


def compile_for(shape):
    folder = folder_for(shape)
    os.makedirs(folder, exist_ok=True)
    _maybe_write(os.path.join(folder, "scale.c"), SOURCE)
    _maybe_write(os.path.join(folder, "Makefile"),
                 "B := %s\n$(B)/scale.so: $(B)/scale.c $(B)/Makefile\n"
                 "\tcc -O2 -shared -fPIC $(B)/scale.c -o $(B)/scale.so\n" % folder)
    subprocess.run(["make", "-s", "-C", folder], check=True)
    time.sleep(0.5)   # a compiler's own time beside cc's (Triton's is a second or more a kernel)
    lib = ctypes.CDLL(os.path.join(folder, "scale.so"))
    lib.kaudit_shape_scale.restype = ctypes.c_double
    return float(lib.kaudit_shape_scale())


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.compiled = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self.compiled:
            self.compiled[key] = compile_for(key)
        return x * self.compiled[key]


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
