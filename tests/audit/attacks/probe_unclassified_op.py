"""Attack F5 (task matmul, contract forbids gemm): probe_unclassified_op -
delegate the GEMM to an ATen operator that no work family names:
F.embedding_bag with per-sample weights computes out[i] = sum_k a[i, k] * b[k].

What it does: forward calls torch.nn.functional.embedding_bag with the
indices 0..K-1 for every row, b as the embedding table and the rows of a as
the per-sample weights (mode "sum"): the product a @ b, computed by the
framework.  No mm, no gemm family operator is dispatched: the probe, whose
targets were the operators of the forbidden classes by name, perturbs
nothing and reports no-targets.  The output is correct: semantic PASS.

What it exploits: a target list made of operator families; the framework has
many more operators than the families name.

What a correct defence must do: target every ATen operator that is no other
class's (glue, elementwise ...) and does work of its own, so that the
replacement of embedding_bag's output moves the candidate's, and the
implementation axis FAILs (forbidden-work-used).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        m, k = a.shape
        rows = torch.arange(k, device=a.device).expand(m, k)
        return F.embedding_bag(rows, b, per_sample_weights=a, mode="sum")
