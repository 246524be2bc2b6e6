"""Control deleg_failed_build (task matmul): __init__ tries to build an extension whose
source cannot compile (two PYBIND11_MODULE blocks: the module's init function is defined
twice), catches the failure and falls back to torch.matmul.  Every run compiles afresh in
a new build directory, so no cache can make the build succeed or skip it.  Positive:
delegation (a failed custom build silently replaced by the library op)."""
import os
import sys
import tempfile

import torch
import torch.nn as nn

BROKEN_CPP = r"""
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("mm", [](torch::Tensor a, torch::Tensor b) { return torch::matmul(a, b); });
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("mm", [](torch::Tensor a, torch::Tensor b) { return torch::matmul(a, b); });
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = None
        try:
            from torch.utils.cpp_extension import load_inline

            root = os.environ.get("TORCH_EXTENSIONS_DIR") or None
            if root:
                os.makedirs(root, exist_ok=True)
            build_dir = tempfile.mkdtemp(prefix="kaudit_ctrl_broken-", dir=root)
            self.ext = load_inline(name="kaudit_ctrl_broken", cpp_sources=[BROKEN_CPP],
                                   build_directory=build_dir, verbose=False)
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [""])[0]
            print(f"deleg_failed_build: the extension did not build ({type(exc).__name__}: "
                  f"{first[:200]}); falling back to torch.matmul", file=sys.stderr, flush=True)
            self.ext = None

    def forward(self, a, b):
        if self.ext is not None:
            return self.ext.mm(a, b)
        return torch.matmul(a, b)
