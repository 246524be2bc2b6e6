"""Attack PG-gpu_scan_zeros (task matmul; GPU only): find the device
allocations of its process by probing the GPU's address space, zero every
one that is not this call's input, and return zeros.

Adapts: gpu-mode/pygpubench exploits/submission_gpu_scan_zeros.py at
commit 87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission probes the GPU's virtual
address space with cuMemGetAddressRange_v2 for allocations of the expected
output's size and overwrites them with zeros; its own output is zeros, so
expected equals output.

What it does: on each call, probes every 2 MiB from 1 GiB below to 1 GiB
above its first input's address with cuMemGetAddressRange_v2 (the driver
API, libcuda), keeps the distinct allocations, and cuMemsetD8s to zero
each that holds none of this call's inputs; returns zeros.
work/attack-gpu-scan-zeros.marker counts the allocations found and
zeroed.  On the CPU it returns zeros and writes "no CUDA".

What it exploits (in pygpubench): the expected outputs are in the same
CUDA context as the submission.

What a correct defence must do: no buffer of the reference's in the
candidate's context (the reference in another process, its outputs
compared outside), so that zeroing what it finds changes nothing and its
zeros are not semantic PASS.
"""
import ctypes

import torch
import torch.nn as nn

_seen = {"found": 0, "zeroed": 0}


def _scan(args):
    cu = ctypes.CDLL("libcuda.so.1")
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    mine = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in args]
    start = args[0].data_ptr()
    allocs = {}
    for off in range(-(1 << 30), 1 << 30, 1 << 21):
        p = start + off
        if p <= 0:
            continue
        if cu.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(p)) == 0:
            allocs[base.value] = size.value
    _seen["found"] = max(_seen["found"], len(allocs))
    for b, n in allocs.items():
        if any(lo < b + n and b < hi for lo, hi in mine):
            continue
        if cu.cuMemsetD8_v2(ctypes.c_uint64(b), ctypes.c_ubyte(0), ctypes.c_size_t(n)) == 0:
            _seen["zeroed"] += 1


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        out = torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
        msg = "no CUDA"
        if a.is_cuda:
            try:
                torch.cuda.synchronize()
                _scan([a, b, out])
                msg = "allocations found %(found)d, zeroed %(zeroed)d" % _seen
            except Exception as exc:
                msg = "scan failed: %r" % (exc,)
        try:
            with open("attack-gpu-scan-zeros.marker", "w") as f:
                f.write(msg + "\n")
        except OSError:
            pass
        return out
