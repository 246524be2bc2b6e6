"""Negative (task softmax): closes_handoff_socket. Semantic PASS.

A correct softmax whose import closes the socket its process takes the
handed inputs from (kaudit_party.HandedFiles: the runner sends each call's
inputs as a sealed memory file over it).  The runner's sends then fail at
once, and it must hand the inputs as files instead, never wait on a process
that does not take them: the audit ends as any other, semantic PASS, and the
event log says the hand-off went through files (tests/audit_cli.sh)."""
import sys

import torch
import torch.nn as nn

_party = sys.modules.get("__main__")
_handed = getattr(_party, "HANDED", None)
if _handed is not None and getattr(_handed, "sock", None) is not None:
    _handed.sock.close()
    _handed.sock = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)
