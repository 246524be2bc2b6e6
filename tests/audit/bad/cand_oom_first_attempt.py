"""Bad candidate (task softmax): its first audit runs out of memory.

The first call anywhere raises MemoryError("... out of memory ...") when the
file named by KAUDIT_TEST_OOM_MARKER does not exist yet, and creates it; from
then on it is a correct softmax.  In a batch with --jobs 2 the pair is run
again alone once the others are done (tests/audit_cli.sh): the ledger gets one
line for it, from the second attempt, which says it was retried."""
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        marker = os.environ.get("KAUDIT_TEST_OOM_MARKER")
        if marker and not os.path.exists(marker):
            open(marker, "w").close()
            raise MemoryError("kaudit test: out of memory on the first attempt")
        return torch.softmax(x, dim=-1)
