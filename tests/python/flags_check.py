"""tests/python/flags_check.py RUNNER_DIR - runner/kaudit_flags.py applies in
the reference's process only the switch values it knows, whatever the
candidate's process reported, and puts this process's own back even when
setting one fails (a forged report: default_dtype float64 followed by a
matmul precision PyTorch refuses left float64 set before)."""
import sys

sys.path.insert(0, sys.argv[1])
import torch  # noqa: E402

import kaudit_flags  # noqa: E402

fails = 0


def check(what, ok):
    global fails
    print(("ok: " if ok else "FAIL: ") + what)
    fails += not ok


before = kaudit_flags.global_flags()
forged = {"default_dtype": "float64", "float32_matmul_precision": "bogus", "matmul_allow_tf32": "yes"}
check("a value of no known kind is not allowed", not kaudit_flags.allowed("float32_matmul_precision", "bogus"))
check("a string for a boolean switch is not allowed", not kaudit_flags.allowed("matmul_allow_tf32", "yes"))
with kaudit_flags.applied(forged):
    check("the known value is applied", torch.get_default_dtype() == torch.float64)
check("this process's own switches back after", kaudit_flags.global_flags() == before)


def refuse(value):
    raise ValueError("refused")


real = getattr(torch, "set_float32_matmul_precision", None)
torch.set_float32_matmul_precision = refuse   # a switch whose setting fails
try:
    with kaudit_flags.applied({"default_dtype": "float64", "float32_matmul_precision": "medium"}):
        pass
except ValueError:
    pass
if real is not None:
    torch.set_float32_matmul_precision = real
else:
    del torch.set_float32_matmul_precision
check("a switch that fails to set leaves nothing behind", kaudit_flags.global_flags() == before)
sys.exit(1 if fails else 0)
