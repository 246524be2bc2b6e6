#!/usr/bin/env python3
"""fork_subprocess.py - scenario (e) of the GPU suite: children under PyTorch.

1. The parent runs a small CUDA op.
2. It starts `python -c ...` with subprocess and a scrubbed environment (PATH
   only, as some harnesses do): no LD_PRELOAD, no KAUDIT_* variables.  The
   child imports torch and runs a CUDA op of its own.  Under `kaudit run`
   the preload must put its variables back at exec, so the child is traced
   (flagged as re-injected) and its kernels are recorded.
3. It forks a child that does nothing and leaves through os._exit(7): its
   trace must exist, say it is a fork child, and either end with status 7 or
   say that it was cut short.

stdout: hashes of both CUDA results and the fork child's exit status.
stderr: "KAUDIT_TEST parent_pid <pid>", "KAUDIT_TEST child_pid <pid>",
        "KAUDIT_TEST fork_pid <pid>".
"""

import ctypes
import hashlib
import os
import subprocess
import sys

import torch

CHILD_CODE = r"""
import ctypes, hashlib, torch
t = torch.full((4096,), 2.0, device='cuda')
u = (t * 3.0).cpu()
print('child sha256=' + hashlib.sha256(ctypes.string_at(u.data_ptr(), u.numel() * 4)).hexdigest())
"""


def main():
    if not torch.cuda.is_available():
        print("torch.cuda is not available", file=sys.stderr)
        return 2
    print("KAUDIT_TEST", "parent_pid", os.getpid(), file=sys.stderr, flush=True)

    x = torch.arange(4096, device="cuda", dtype=torch.float32).mul_(0.5)
    xc = x.cpu()
    digest = hashlib.sha256(ctypes.string_at(xc.data_ptr(), xc.numel() * 4)).hexdigest()
    print(f"parent sha256={digest}", flush=True)

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    child = subprocess.Popen([sys.executable, "-c", CHILD_CODE], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    print("KAUDIT_TEST", "child_pid", child.pid, file=sys.stderr, flush=True)
    out, err = child.communicate(timeout=300)
    sys.stderr.write(err)
    sys.stdout.write(out)
    print(f"scrubbed-env child exit={child.returncode}", flush=True)

    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    print("KAUDIT_TEST", "fork_pid", pid, file=sys.stderr, flush=True)
    _, status = os.waitpid(pid, 0)
    print(f"fork child exit={os.waitstatus_to_exitcode(status)}", flush=True)
    return 0 if child.returncode == 0 and os.waitstatus_to_exitcode(status) == 7 else 1


if __name__ == "__main__":
    sys.exit(main())
