"""Attack F1 (task matmul, contract forbids gemm): probe_pop_mode - delegate the
GEMM to torch.matmul and hide it from the causal probe by popping PyTorch's
dispatch mode stack around the call.

What it does: forward pops every TorchDispatchMode off the stack
(torch.utils._python_dispatch._pop_mode_temporarily, or the raw
_pop_torch_dispatch_stack), calls torch.matmul, and pushes the modes back.
The probe's Dispatch mode (runner/kaudit_probe.py) then records no mm: its
baseline has no target, the probe says no-targets, and on --device cpu,
where the probe alone decides the implementation axis, the delegation goes
unconvicted (UNSUPPORTED instead of FAIL).  The output is correct, so the
semantic axis PASSes: the forbidden work is what a PASS would hide.

What it exploits: the probe observes through a Python-level mode that the
observed code shares an interpreter with and can remove.

What a correct defence must do: observe below anything the candidate can
undo (the dispatcher's C++ side, a key the candidate cannot pop, the
preload's trace), or check that the mode stack seen inside the call is
the one the probe pushed (a mode that saw fewer operators than the
dispatcher ran, or was not on top when an operator ran, makes the probe
unresolved); the implementation axis must then be FAIL (forbidden gemm
used) or INCONCLUSIVE/unresolved with that cause, never an unconvicted
UNSUPPORTED/PASS.
"""
import torch
import torch.nn as nn

try:
    from torch.utils import _python_dispatch as _pd
except Exception:  # pragma: no cover
    _pd = None


def _hidden(fn, *args):
    if _pd is None:
        return fn(*args)
    popped = []
    try:
        while torch._C._len_torch_dispatch_stack() > 0:
            popped.append(_pd._pop_mode())
        return fn(*args)
    finally:
        for m in reversed(popped):
            _pd._push_mode(m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return _hidden(torch.matmul, a, b)
