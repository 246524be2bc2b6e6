"""Attack (task softmax): store_inodes - fill the build store with files
that weigh nothing by their bytes.

What it does: computes softmax honestly, and leaves 25,000 empty files in a
folder of its cache.

What it exploits: a store whose size counts only the files' bytes keeps such
an entry as a few bytes (the review of the build store kept 190,000 files,
783 MB on disk and 190,000 inodes, as one byte, and evicted nothing), so
entries that eviction never sees can fill the store's filesystem.

What a correct defence must do: bound an entry's files and folders, and
count each as the filesystem does (blocks and an inode): this entry is not
kept, and says why (tests/audit_build_store.sh).
"""
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        folder = os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "many")
        os.makedirs(folder, exist_ok=True)
        for i in range(25000):
            open(os.path.join(folder, "f%05d" % i), "w").close()

    def forward(self, x):
        m = x.max(dim=-1, keepdim=True).values
        e = (x - m).exp()
        return e / e.sum(dim=-1, keepdim=True)
