"""Attack PG-pipe_interpose (task matmul, contract forbids gemm): delegate the
GEMM to torch.matmul and rewrite, on its way out, what the candidate's
process reports about the causal probe.

Adapts: gpu-mode/pygpubench exploits/submission_pipe_interpose.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission dup2()s the harness's result pipe
onto a pipe of its own and a background thread rewrites the timing lines
before passing them on.

What it does: at import it finds the channel on which runner/kaudit_party.py
answers the runner (the object with a "wfd" among gc's objects), keeps a
duplicate of that descriptor, dup2()s a fresh pipe over it and starts a
thread that reads the pipe line by line and forwards every line to the
duplicate; an answer carrying a "probe" event is rewritten into a probe
that found nothing to perturb (status no-targets, no targets, only the
baseline and repeat replays).  Its forward is torch.matmul, so its output
is right and the semantic axis PASSes; the forbidden gemm is what is hidden.
work/attack-pipe-interpose.marker says what was set up and rewritten.

What it exploits: the probe's replays run in the candidate's process, and
their result comes back as that process's own report, which anything in the
process can change after the probe's code produced it.

What a correct defence must do: not take the probe's conclusion from the
candidate's process: the runner (or the judge) decides from what it can
check itself (the replays' outputs taken as files it names, the targets it
asked for, the baseline compared with the reference, the trace), so that
this candidate is implementation FAIL, or the probe unresolved, never an
unconvicted no-targets.
"""
import gc
import json
import os
import threading

import torch
import torch.nn as nn


def _note(s):
    try:
        with open("attack-pipe-interpose.marker", "a") as f:
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
    _note("rewrote a probe answer")
    return (json.dumps(obj) + "\n").encode()


def _pump(rfd, out):
    buf = b""
    while True:
        chunk = os.read(rfd, 1 << 16)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            data = _rewrite(line + b"\n")
            while data:
                data = data[os.write(out, data):]


def _interpose():
    for obj in gc.get_objects():
        try:
            if type(obj).__name__ == "Channel" and isinstance(getattr(obj, "wfd", None), int):
                wfd = obj.wfd
                break
        except Exception:
            pass
    else:
        _note("no channel found")
        return
    saved = os.dup(wfd)
    r, w = os.pipe()
    os.dup2(w, wfd)
    os.close(w)
    threading.Thread(target=_pump, args=(r, saved), daemon=True).start()
    _note("interposed on descriptor %d (forwarding to %d)" % (wfd, saved))


try:
    _interpose()
except Exception as exc:
    _note("failed: %r" % (exc,))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)
