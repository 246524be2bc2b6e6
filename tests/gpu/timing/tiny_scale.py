# A timing control (docs/timing.md): the two-pass scale on 4096 floats, a few
# microseconds per call, where timing noise is of the order of the time: the
# control for a sub-0.1 ms task whose A/A screen is expected to fail.
import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 2.0) * 3.0


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
