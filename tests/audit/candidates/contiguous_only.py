"""Positive for the stress policy (task softmax): contiguous_only.

Right on every input the task itself makes (get_inputs() gives a
contiguous [64, 512] tensor), wrong on a strided or transposed view: it reads
its input's storage as dense rows from the input's first element, as a CUDA
kernel that indexes `x.data_ptr()` with row-major offsets does.  The task's
contract declares no other layout, so under the paper's contract-supported
policy (the default) its semantic axis PASSes and the record reports
layout-strided and layout-transposed; with `--require layouts`, or a contract
whose stress.layouts declares them, it FAILs.
"""
import torch
import torch.nn as nn


def dense_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows = torch.as_strided(x, x.shape, dense_strides(x.shape), x.storage_offset())
        m = rows.max(dim=-1, keepdim=True)[0]
        e = torch.exp(rows - m)
        return e / e.sum(dim=-1, keepdim=True)
