"""bench/timing_tracing.py REFERENCE.py CANDIDATE.py - one paired timing of
the reference (Model) against the candidate (ModelNew, or Model when the
file has none: a kernel against itself), with kaudit audit's own protocol
(runner/kaudit_timing.py: Timer, paired_batches; and, as Runner.timed in
runner/kaudit_runner.py, each arm's own inputs cloned afresh for every
call; ABBA, BAAB, ABBA).  Prints arm A's 60 latencies, then arm B's, in ms, for bench/timing_ratio.c.  Run
bare and under `kaudit run` by bench/timing_tracing.sh."""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runner"))
import torch  # noqa: E402
from kaudit_inputs import clone_tree  # noqa: E402
from kaudit_timing import AA_ORDERS, Timer, paired_batches  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ref_mod, cand_mod = load(sys.argv[1], "ref"), load(sys.argv[2], "cand")
torch.manual_seed(0)
ref = ref_mod.Model(*ref_mod.get_init_inputs()).cuda().eval()
cand_cls = getattr(cand_mod, "ModelNew", None) or cand_mod.Model
cand = cand_cls(*ref_mod.get_init_inputs()).cuda().eval()
timer = Timer(torch.device("cuda"))


def arm(model):
    """As the audit times an arm: inputs of its own, fresh clones for every
    call, made before its start event (runner/kaudit_runner.py, Runner.timed)."""
    base = [a.cuda() if isinstance(a, torch.Tensor) else a for a in ref_mod.get_inputs()]

    def one():
        args = clone_tree(base)
        return timer.time(lambda: model(*args))
    return one


with torch.no_grad():
    batches = paired_batches(arm(ref), arm(cand), AA_ORDERS)
print(" ".join("%.6f" % v for b in batches for v in b["a"]))
print(" ".join("%.6f" % v for b in batches for v in b["b"]))
