"""Attack (task matmul, contract forbids gemm): probe_overwrite_reference -
probe_detect_zeros's delegation (torch.matmul on the slots, a constant while
the causal probe watches), and the reference's answer on the probe's inputs
replaced by that constant.

What it does: its process's probe answer gets two more replays without a
name, whose files it wrote in its own folder as probe-reference.kt and
probe-reference64.kt (the constant, sampled with the probe's nonce as the
runner samples).

What it exploits: the runner named the copy of each replay's file after the
candidate's own name for it ("probe-" + the rest), which here is the name of
the runner's own file of the reference's outputs on the probe's inputs, and
copied over it; kaudit's reader skipped replays without a name.  The
baseline check then compared the candidate's constant with itself: "match",
the output never moves under the perturbation, and the forbidden GEMM counts
as unused: implementation no longer FAIL (found by a hostile review,
2026-12-06).

What a correct defence must do: the runner names the copies itself, never
after the candidate, and never over a file already there; a replay without
a name is a malformed answer (the probe unresolved), not one to skip.
"""
import os
import sys

import torch
import torch.nn as nn


def _watched():
    try:
        return torch._C._len_torch_dispatch_stack() > 0
    except AttributeError:  # pragma: no cover
        return False


def _constant(shape, dtype):
    return torch.randn(shape, generator=torch.Generator().manual_seed(1234), dtype=torch.float64).to(dtype)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        out = torch.matmul(a, b)
        return _constant(out.shape, out.dtype) if _watched() else out


_party = sys.modules.get("__main__")
if _party is not None and hasattr(_party, "Party"):
    _answer = _party.Party.op_probe

    def op_probe(self, q):
        ans = _answer(self, q)
        ev = ans.get("probe")
        if isinstance(ev, dict) and isinstance(ev.get("replays"), list):
            key = ("probe", q["nonce"])
            c32 = _constant((128, 96), torch.float32)
            tiny = torch.randn((128, 96), generator=torch.Generator().manual_seed(99), dtype=torch.float64)
            c64 = c32.double() * (1 + 3e-8 * tiny)
            for name, value in (("probe-reference.kt", c32), ("probe-reference64.kt", c64)):
                _party.kaudit_tensors.write_tensor_file(os.path.join(self.out, name),
                                                        _party.sampled(_party.output_leaves(value), key))
                ev["replays"].append({"file": name})
        return ans

    _party.Party.op_probe = op_probe
