"""kaudit_flags.py - PyTorch's process-wide switches that a candidate can
flip from its own code (TF32, the float32 matmul precision, cuDNN's benchmark
and deterministic modes, deterministic algorithms, the default dtype, the
thread count): read before the candidate is imported and after its calls, and
set in the reference's process to rerun the reference under the candidate's
(docs/audit.md, "Global state").

In a harness that runs reference and candidate in one process (KernelBench),
a switch the candidate flips also changes the reference it is compared with.
"""

import torch

# The switches that can change a float32 result; the others are recorded only.
RESULT_FLAGS = ("matmul_allow_tf32", "cudnn_allow_tf32", "float32_matmul_precision", "default_dtype")


def global_flags():
    flags = {
        "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
        "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        "default_dtype": str(torch.get_default_dtype()).replace("torch.", ""),
        "num_threads": int(torch.get_num_threads()),
    }
    if hasattr(torch, "get_float32_matmul_precision"):
        flags["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    return flags


def changed(before, after):
    """The names of the switches whose value differs, in a stable order."""
    return sorted(k for k in after if k in before and before[k] != after[k])


# The values a switch may be set to here; the candidate's process reports them,
# and anything else is not applied (a hostile report cannot reach this process)
_ALLOWED = {
    "matmul_allow_tf32": (True, False),
    "cudnn_allow_tf32": (True, False),
    "float32_matmul_precision": ("highest", "high", "medium"),
    "default_dtype": ("float32", "float64", "float16", "bfloat16"),
}


def allowed(name, value):
    return name in _ALLOWED and any(value == v and type(value) is type(v) for v in _ALLOWED[name])


def _set(name, value):
    if name == "matmul_allow_tf32":
        torch.backends.cuda.matmul.allow_tf32 = bool(value)
    elif name == "cudnn_allow_tf32":
        torch.backends.cudnn.allow_tf32 = bool(value)
    elif name == "float32_matmul_precision" and hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision(str(value))
    elif name == "default_dtype":
        torch.set_default_dtype(getattr(torch, str(value)))


class applied:
    """Within it, the given result switches set as the candidate left them;
    this process's own values put back after."""

    def __init__(self, flags):
        self.flags = {k: v for k, v in flags.items() if k in RESULT_FLAGS and allowed(k, v)}

    def __enter__(self):
        self.saved = global_flags()
        try:
            for k, v in self.flags.items():
                _set(k, v)
        except BaseException:
            self._restore()
            raise
        return self

    def _restore(self):
        for k in self.flags:
            if k in self.saved:
                _set(k, self.saved[k])

    def __exit__(self, *exc):
        self._restore()
        return False
