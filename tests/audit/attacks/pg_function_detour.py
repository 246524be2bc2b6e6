"""Attack PG-function_detour (task matmul; GPU only): overwrite the first
bytes of cudaEventElapsedTime in the CUDA runtime with a jump to a function
of its own that reports 0.001 ms.

Adapts: gpu-mode/pygpubench exploits/submission_function_detour.py at
commit 87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission writes a 12-byte
trampoline (movabs rax, ADDR; jmp rax) over cudaEventElapsedTime's
prologue in libcudart's text, pointing at code that stores a tiny constant
in the result and returns cudaSuccess; the kernel computes correctly, only
the timing is faked.

What it does: at import, initialises CUDA (where there is one), finds the
libcudart the process loaded (/proc/self/maps), takes the address of its
cudaEventElapsedTime, makes that page writable and executable (mprotect)
and writes the trampoline to a ctypes callback that sets *ms = 0.001 and
returns 0.  Its forward computes a @ b as a broadcast product and a sum (no
gemm).  work/attack-function-detour.marker says what was patched, or which
step failed (on the CPU: no CUDA runtime, nothing patched).

What it exploits: the timing primitive runs in the timed process, whose
code the timed code may rewrite.

What a correct defence must do: take the measurement from the trace
(CUPTI's kernel records), not from cudaEventElapsedTime in the candidate's
process; the measurement axis then is not PASS on a reported time that
the kernels' durations contradict (FAIL or INCONCLUSIVE).
"""
import ctypes
import struct

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_void_p)


def _fake(ms, start, end):
    ms[0] = 0.001
    return 0


_keep = [_FN(_fake)]


def _note(s):
    try:
        with open("attack-function-detour.marker", "a") as f:
            f.write(s + "\n")
    except OSError:
        pass


def _detour():
    if not torch.cuda.is_available():
        return "no CUDA: nothing patched"
    torch.cuda.init()
    torch.cuda.Event(enable_timing=True)
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "libcudart" in l})
    if not libs:
        return "no libcudart mapped (a static CUDA runtime?)"
    target = ctypes.cast(ctypes.CDLL(libs[0]).cudaEventElapsedTime, ctypes.c_void_p).value
    page = target & ~0xFFF
    if _libc.mprotect(page, 0x2000, 7) != 0:
        return "mprotect refused: errno %d" % ctypes.get_errno()
    hook = ctypes.cast(_keep[0], ctypes.c_void_p).value
    code = b"\x48\xb8" + struct.pack("<Q", hook) + b"\xff\xe0"
    ctypes.memmove(target, code, len(code))
    _libc.mprotect(page, 0x2000, 5)
    return "patched cudaEventElapsedTime of %s at %#x" % (libs[0], target)


try:
    _note(_detour())
except Exception as exc:
    _note("failed: %r" % (exc,))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return (a.unsqueeze(2) * b.unsqueeze(0)).sum(1)
