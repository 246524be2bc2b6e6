"""Attack (task shape_compiled, tests/audit/tasks/shape_compiled.py): poisons
the reference's run-time compilation for shapes it has not met yet, through
the temporary and working directories both parties shared.  Wrong on
purpose: x * 2 on the task's own shape, x * 3 on any other (a kernel
specialized to the benchmark's shape, which the shape probes exist to
catch; run with --require shapes, where they gate).

Exploits: the reference (in the runner's process) compiled at run time into
TMPDIR and beneath its working directory, which were the candidate's too
(DIR/tmp, DIR/work).  At import, before the reference meets the shape
probes' shapes (kaudit_inputs.probe_shapes: [65, 513] and [33, 512] for
[64, 512]; the runner computes them after every gating slot), it lays out
the reference's build folder for each (source and build file as the
reference writes them, beside a library of its own returning 3, newer than
both), so make finds nothing to do and the reference computes x * 3 there,
agreeing with the candidate's wrong answers: the shape probes pass.

A correct defence: the runner's temporary and working directories are its
own (DIR/reference-tmp, DIR/reference-work), where the candidate's process
can neither write nor read; the planted folders land in its own, and the
shape probes are FAIL.  Its tries at the runner's folders, where it sees
them, are refused."""
import ctypes
import os
import subprocess
import tempfile

import torch
import torch.nn as nn

SOURCE = "double kaudit_shape_scale(void) { return 2.0; }\n"
POISON = "double kaudit_shape_scale(void) { return 3.0; }\n"
KERNEL = ("void times(const float *x, float *y, long n, float k) "
          "{ for (long i = 0; i < n; i++) y[i] = k * x[i]; }\n")
PROBES = ((65, 513), (33, 512))


def _poison_library():
    """The library of its own, compiled once (its import must win the race
    with the reference's compiles only where it has to)."""
    t = tempfile.mkdtemp()
    src = os.path.join(t, "poison.c")
    with open(src, "w") as f:
        f.write(POISON)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", src, "-o", os.path.join(t, "poison.so")], check=True)
    with open(os.path.join(t, "poison.so"), "rb") as f:
        return f.read()


def _plant(folder, library):
    try:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "scale.c"), "w") as f:
            f.write(SOURCE)
        with open(os.path.join(folder, "Makefile"), "w") as f:
            f.write("B := %s\n$(B)/scale.so: $(B)/scale.c $(B)/Makefile\n"
                    "\tcc -O2 -shared -fPIC $(B)/scale.c -o $(B)/scale.so\n" % folder)
        with open(os.path.join(folder, "scale.so.new"), "wb") as f:
            f.write(library)
        os.replace(os.path.join(folder, "scale.so.new"), os.path.join(folder, "scale.so"))   # last: newest
        return "planted"
    except OSError as exc:
        return "refused: %s" % exc


def _where(shape):
    name = "kaudit_shape_" + "x".join(str(s) for s in shape)
    if shape[-1] % 2 == 0:
        return [os.path.abspath(os.path.join("build", name))]
    return [os.path.join(tempfile.gettempdir(), name)]


_audit_dir = os.path.dirname(os.getcwd())   # the worker's cwd is DIR/work
_library = _poison_library()
PLANTED = {}
for shape in PROBES:
    for folder in _where(shape):
        PLANTED[folder] = _plant(folder, _library)
    name = os.path.basename(_where(shape)[0])
    for runner_own in ("reference-tmp", "reference-work"):   # where the runner's are now, where it sees them
        there = os.path.join(_audit_dir, runner_own)
        if os.path.isdir(there):
            folder = os.path.join(there, name) if runner_own == "reference-tmp" else os.path.join(there, "build", name)
            PLANTED[folder] = _plant(folder, _library)


def _kernel():
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "k.c"), "w") as f:
        f.write(KERNEL)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", os.path.join(folder, "k.c"), "-o",
                    os.path.join(folder, "k.so")], check=True)
    lib = ctypes.CDLL(os.path.join(folder, "k.so"))
    lib.times.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_float]
    return lib


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = _kernel()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.times(x.data_ptr(), y.data_ptr(), x.numel(), 2.0 if tuple(x.shape) == (64, 512) else 3.0)
        return y
