"""Attack (task scratch_tmp): chmod_reference_tmp - right everywhere, and at
import the reference's temporary directory made read-only with chmod.

What it does: its import chmod()s DIR/reference-tmp to 0555 through libc
while the runner is still computing the reference's slots (the reference,
tests/audit/tasks/scratch_tmp.py, writes a scratch file there on each call).

What it exploits: Landlock governs no chmod, and both parties run as the
worker's uid, which owns the reference's folders.  The reference's calls
then raise PermissionError, and the runner took that for "the reference
cannot take this slot's inputs": the slot replaced by a spare native seed,
a reported slot or an extra check skipped.  A candidate wrong only where
the reference is made to fail (a shape, a mode, the long run) escapes that
check.

What a correct defence must do: an error of the reference's that the
kernel's refusal caused (EPERM, EACCES, EXDEV) is no property of the slot:
the audit ends INCONCLUSIVE (reference-refused), nothing replaced or skipped.
"""
import ctypes
import os

import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_folder = os.path.join(os.path.dirname(os.getcwd()), "reference-tmp")
_rc = _libc.chmod(_folder.encode(), 0o555)
with open("attack-chmod-reference-tmp.marker", "w") as _m:
    _m.write("chmod 0555 %s: %s\n" % (_folder, "ok" if _rc == 0 else os.strerror(ctypes.get_errno())))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2
