"""Attack (task softmax): store_poison - feed another candidate's audit a
build of one's own through the build store.

What it does: computes softmax honestly, so that its audit ends cleanly and
its builds are kept.  In its cache it lays out the build folder of another
candidate (tests/audit/candidates/builds_in_cache.py, whose text an attacker
can read): the same source and build file, byte for byte, at the path every
audit's worker sees its cache at, and beside them a library built from
other source that is newer than both, so make (as ninja) takes it as up to
date.  It also plants what a build store must never carry: PyTorch's build
lock (every later load of that name would wait for ever), a link to a file
it may not read, a named pipe and a file with a second name.

What it exploits: a store keyed by anything short of the candidate's own
bytes (the extension's name, the task, the device) would copy this folder
into the other candidate's cache; that candidate's audit would load the
poisoned library and its certificate would be this one's doing.

What a correct defence must do: an entry is used only by audits of the
candidate whose bytes made it (a hash collision is a miss); no lock, link,
device, pipe or second name goes into an entry.  tests/audit_build_store.sh
audits this, then builds_in_cache with the same store: a miss, its own build,
semantic PASS.
"""
import os
import subprocess

import torch
import torch.nn as nn

HONEST = "int kaudit_helper(int x) { return x + 1; }\n"
POISON = "int kaudit_helper(int x) { return x + 2; }\n"


def _plant():
    folder = os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "kaudit_helper")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "helper.c"), "w") as f:
        f.write(HONEST)
    with open(os.path.join(folder, "Makefile"), "w") as f:
        f.write("B := %s\n$(B)/helper.so: $(B)/helper.c $(B)/Makefile\n"
                "\tcc -O2 -shared -fPIC $(B)/helper.c -o $(B)/helper.so\n" % folder)
    with open(os.path.join(folder, "poison.c"), "w") as f:
        f.write(POISON)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", os.path.join(folder, "poison.c"), "-o",
                    os.path.join(folder, "helper.so")], check=True)
    os.remove(os.path.join(folder, "poison.c"))
    planted = {
        "lock": lambda p: open(p, "w").close(),
        "secret": lambda p: os.symlink("/etc/shadow", p),
        "pipe": os.mkfifo,
    }
    for name, make in planted.items():
        try:
            make(os.path.join(folder, name))
        except OSError:
            pass
    with open(os.path.join(folder, "twice"), "w") as f:
        f.write("one file, two names\n")
    try:
        os.link(os.path.join(folder, "twice"), os.path.join(folder, "twice2"))
    except OSError:
        pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _plant()

    def forward(self, x):
        m = x.max(dim=-1, keepdim=True).values
        e = (x - m).exp()
        return e / e.sum(dim=-1, keepdim=True)
