"""Weak control: right everywhere, but every call starts a thread that outlives
it (the shape of a harness hack that finishes work after the timer stops).
DeepReinforce's thread-count guard REJECTs it; the others ACCEPT."""
import threading
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
