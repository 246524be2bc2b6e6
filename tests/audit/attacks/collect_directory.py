"""Attack collect_directory (task matmul): a wrong candidate (it returns
zeros) that answers every request for its outputs and its state with the name
of a directory, so that nothing of its own can be compared.

What it does: at import it replaces the op_collect and op_state handlers of
runner/kaudit_party.py's Party class (the process's main script) with ones
that answer {"file": "."}: its output directory
itself, not a file.  Its forward returns zeros.

What it exploits: the runner's take() refused such an answer by raising the
exception it uses for a candidate process that is gone, so each call was
"candidate-process-ended", an unmet precondition: the semantic axis
INCONCLUSIVE instead of FAIL, a wrong candidate turned into an abstention.

What a correct defence must do: an answer of the candidate's process that
names no regular file of its own is the candidate's failure on that call
(candidate-raised, which convicts), never a lost process: the semantic axis
FAIL.
"""
import sys

import torch
import torch.nn as nn

# the party runs as the process's main script (or was imported as kaudit_party)
for _name in ("__main__", "kaudit_party"):
    _cls = getattr(sys.modules.get(_name), "Party", None)
    if _cls is not None and hasattr(_cls, "op_collect"):
        _cls.op_collect = lambda self, q: {"file": "."}
        _cls.op_state = lambda self, q: {"file": "."}
        try:
            with open("attack-collect-directory.marker", "w") as _f:
                _f.write("patched %s.Party\n" % _name)
        except OSError:
            pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
