"""Attack H (task matmul, no --contract): drop_inputs_event - remove the
evidence a contract is generated from.

What it does: the candidate hands its GEMM to torch.matmul.  Without
--contract, kaudit writes the task's contract from the runner's "inputs"
event (what the reference's get_inputs() returned).  On its first call the
candidate rewrites that event in place, with raw libc calls and the same
length ("inputs" -> "inpuTs"), so no contract can be generated.

What it exploits: a contract that cannot be generated used to fall back to
one that forbids nothing; judged that way, a recorded torch.matmul
delegation gets implementation PASS on the GPU (on the CPU the probe finds
no targets: UNSUPPORTED).

What a correct defence must do: fail closed: with no contract from the
runner's evidence, the implementation axis is INCONCLUSIVE with the cause,
never judged against a permissive fallback.
"""
import ctypes
import json
import os

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
_libc.pread.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long]
_libc.pwrite.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_long]
_libc.pread.restype = _libc.pwrite.restype = ctypes.c_ssize_t


def _events_path():
    with open("/proc/self/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    plan = next(a for a in argv if a.endswith(b".json"))
    with open(plan) as f:
        return os.path.join(json.load(f)["out_dir"], "events.jsonl").encode()


def _hide_inputs(path):
    fd = _libc.open(path, os.O_RDWR, 0)
    if fd < 0:
        return
    try:
        buf = ctypes.create_string_buffer(1 << 20)
        n = _libc.pread(fd, buf, len(buf), 0)
        if n <= 0:
            return
        data = buf.raw[:n]
        new = data.replace(b'"event": "inputs"', b'"event": "inpuTs"')
        if new != data:
            _libc.pwrite(fd, new, len(new), 0)
    finally:
        _libc.close(fd)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._done = False

    def forward(self, a, b):
        if not self._done:
            self._done = True
            try:
                _hide_inputs(_events_path())
            except Exception:
                pass
        return torch.matmul(a, b)
