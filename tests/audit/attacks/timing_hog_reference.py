"""Attack (task matmul; GPU only): timing_hog_reference - look faster by
slowing the reference while it is timed.

What it does: computes the product with a Triton kernel of its own (an
honest, self-implemented candidate), and in __init__ starts a thread with a
CUDA stream of its own that, whenever the candidate is not inside a call,
keeps the GPU busy with a copy kernel of its own over 256 MiB.  Inside its
calls the thread pauses and its stream is drained first, so no window of
the candidate's holds that work.  While the reference's arms of the paired
speedup run (in the reference's process, with this process idle by the
protocol), they share the GPU with the copies: the reference is slower, the
reported speedup larger.  work/attack-hog.marker counts the copies.  On
the CPU (no CUDA) it computes with torch.matmul and writes "no CUDA".

What it exploits: kaudit's paired speedup times the reference's arm in the
reference's process while the candidate's process exists; nothing looked
at the candidate's GPU work outside its own calls.

What a correct defence must do: see the candidate's kernels inside the
reference's timed windows (the trace holds both processes' kernels on one
clock) and not report a speedup: the measurement axis INCONCLUSIVE
(candidate-work-in-reference-window), never a PASS with a speedup.
tests/audit_attacks.sh KAUDIT PYTHON ROOT timing_hog_reference cuda.
"""
import threading

import torch
import torch.nn as nn

try:
    import triton
    import triton.language as tl
except Exception:  # no Triton: the attack cannot run its own kernels
    triton = None

if triton is not None:
    @triton.jit
    def _matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            ka = k0 + rk
            at = tl.load(a + rm[:, None] * sam + ka[None, :] * sak, mask=(rm[:, None] < M) & (ka[None, :] < K),
                         other=0.0)
            bt = tl.load(b + ka[:, None] * sbk + rn[None, :] * sbn, mask=(ka[:, None] < K) & (rn[None, :] < N),
                         other=0.0)
            acc += tl.sum(at[:, :, None] * bt[None, :, :], axis=1)   # fp32 products, no tensor-core rounding
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def _copy(src, dst, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


def _note(s):
    try:
        with open("attack-hog.marker", "w") as f:
            f.write(s + "\n")
    except OSError:
        pass


class _Hog:
    def __init__(self):
        self.n = 64 << 20
        self.src = torch.empty(self.n, device="cuda")
        self.dst = torch.empty(self.n, device="cuda")
        self.stream = torch.cuda.Stream()
        self.idle = threading.Event()
        self.idle.set()
        self.copies = 0
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            self.idle.wait()
            with torch.cuda.stream(self.stream):
                for _ in range(4):
                    _copy[(triton.cdiv(self.n, 4096),)](self.src, self.dst, self.n, BLOCK=4096)
                    self.copies += 1
            self.stream.synchronize()
            if self.copies % 400 == 0:
                _note("copies=%d" % self.copies)

    def pause(self):
        self.idle.clear()
        self.stream.synchronize()

    def resume(self):
        self.idle.set()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.hog = _Hog() if torch.cuda.is_available() and triton is not None else None
        if self.hog is None:
            _note("no CUDA" if not torch.cuda.is_available() else "no Triton")

    def forward(self, a, b):
        if self.hog is None:
            return torch.matmul(a, b)
        self.hog.pause()
        try:
            M, K = a.shape
            N = b.shape[1]
            c = torch.empty(M, N, device=a.device, dtype=torch.float32)
            _matmul[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, K, a.stride(0), a.stride(1),
                                                             b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                                             BM=32, BN=32, BK=8)
            return c
        finally:
            self.hog.resume()
