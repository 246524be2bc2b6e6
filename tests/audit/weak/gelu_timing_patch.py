"""Weak control: right everywhere, but at import it replaces
torch.cuda.Event.elapsed_time (the function every CUDA-event harness reads its
times from) by one that reports 0.001 ms.  DeepReinforce's timing-function
guard REJECTs it; the other surfaces check values only and ACCEPT."""
import torch
import torch.nn as nn

torch.cuda.Event.elapsed_time = lambda self, end_event: 0.001


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
