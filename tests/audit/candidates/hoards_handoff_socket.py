"""Negative (task softmax): hoards_handoff_socket. Semantic FAIL.

A correct softmax whose import keeps the socket its process takes the
handed inputs from open, and stops its process from taking any: each call's
memory file stays queued (the kernel holds 10 a socket by default,
net.unix.max_dgram_qlen) and each call whose inputs it cannot load fails.
The runner must never wait on a queue that is full: its send fails at
once, and it hands files from then on (tests/audit_cli.sh).  Before, the
send waited for ever (socket.send_fds drops MSG_DONTWAIT) and the audit
ended only at its time limit.  Its calls that failed are its own doing:
semantic FAIL (candidate-raised)."""
import sys

import torch
import torch.nn as nn

_party = sys.modules.get("__main__")
_handed = getattr(_party, "HANDED", None)
HELD = None
if _handed is not None and getattr(_handed, "sock", None) is not None:
    HELD = _handed.sock     # open, and read by no one
    _handed.sock = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)
