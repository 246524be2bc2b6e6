"""Bad candidate (task softmax): writes outside its directories.

On its first call it opens the file named by KAUDIT_TEST_OUTSIDE_PY for
writing from Python (the runner's audit hook refuses it and logs it; the
candidate swallows the error), then creates KAUDIT_TEST_OUTSIDE_NATIVE through
libc's open(2) with ctypes, which no audit hook sees (Landlock refuses it
when the kernel has Landlock).  Otherwise a correct softmax.  Expected: the
semantic axis INCONCLUSIVE (wrote-outside-directory), neither file written."""
import ctypes
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.tried = False

    def forward(self, x):
        if not self.tried:
            self.tried = True
            py = os.environ.get("KAUDIT_TEST_OUTSIDE_PY")
            if py:
                try:
                    with open(py, "w") as f:
                        f.write("written by the candidate\n")
                except OSError:
                    pass
            native = os.environ.get("KAUDIT_TEST_OUTSIDE_NATIVE")
            if native:
                libc = ctypes.CDLL(None, use_errno=True)
                libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
                fd = libc.open(native.encode(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                if fd >= 0:
                    libc.close(fd)
        return torch.softmax(x, dim=-1)
