"""Bad candidate for tasks/linear.py: ModelNew takes (in_features, out_features, scale)
while get_init_inputs gives [256, 128] (expected: candidate-build-failed, INCONCLUSIVE)."""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=True)
        self.scale = scale

    def forward(self, x):
        return self.fc(x) * self.scale
