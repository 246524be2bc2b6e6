"""A watched party that runs PyTorch operators (tests/python_operators.sh):
prints what it computed and whether a profiler is on after each call, so
the test can check that kaudit's operator sampler changed neither."""
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.topk(x * 2.0, 3, dim=1).values


torch.manual_seed(0)
m = Model()
x = torch.randn(8, 64)
for i in range(6):
    y = m(x)
    print("call %d sum %.6f profiler %s" % (i + 1, float(y.sum()), torch.autograd._profiler_enabled()))
