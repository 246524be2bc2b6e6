"""Positive (task batchnorm): batchnorm_eval_only. Must FAIL.

Normalizes with the running statistics whatever its mode: right in eval
mode, wrong in train mode, where BatchNorm normalizes with the batch's own
statistics (KernelBench calls its models in train mode).  The reference's
output depends on its mode, so the audit runs the slot train_mode
(docs/audit.md, "Modes").
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        bn = self.bn
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        return (x - bn.running_mean) * scale + bn.bias
