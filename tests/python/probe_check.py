"""The causal probe's perturbation (runner/kaudit_probe.py) on real PyTorch:
every kind of operator output is replaced (floats by matched noise,
integers and bools too, an empty output counts as replaced), the same seed
gives the same noise, and operator names map to the plan's targets.
Usage: probe_check.py RUNNER_DIR"""
import sys

sys.path.insert(0, sys.argv[1])
import torch  # noqa: E402

import kaudit_probe as kp  # noqa: E402

failures = []


def expect(what, cond):
    if not cond:
        failures.append(what)


t = torch.randn(64, 32) * 3 + 5
orig = t.clone()
expect("float replaced", kp.replace_with_noise(t, 7) == 1 and not torch.equal(t, orig))
expect("float noise matches mean and spread", abs(float(t.mean()) - float(orig.mean())) < 0.5
       and abs(float(t.std()) - float(orig.std())) < 0.5)
u = orig.clone()
kp.replace_with_noise(u, 7)
expect("same seed, same noise", torch.equal(t, u))
idx = torch.argmax(torch.randn(64, 32), dim=1)
before = idx.clone()
expect("integer indices replaced", kp.replace_with_noise(idx, 3) == 1 and not torch.equal(idx, before))
expect("integers stay within their range", int(idx.min()) >= int(before.min()) and int(idx.max()) <= int(before.max()))
b = torch.ones(128, dtype=torch.bool)
expect("bools replaced", kp.replace_with_noise(b, 3) == 1 and not bool(b.all()))
expect("an empty output counts as replaced", kp.replace_with_noise(torch.empty(0, 4), 1) == 1)
expect("complex is not replaceable", kp.replace_with_noise(torch.zeros(4, dtype=torch.complex64), 1) == 0)
h = torch.randn(16, 16).half()
hb = h.clone()
expect("half replaced", kp.replace_with_noise(h, 2) == 1 and not torch.equal(h, hb))
targets = {"names": {"mm": "gemm", "sum": "reduction"}, "prefixes": [("max_pool", "pooling")]}
expect("exact names", kp.target_class(targets, "mm") == "gemm")
expect("prefixes", kp.target_class(targets, "max_pool2d_with_indices") == "pooling")
expect("others are no target", kp.target_class(targets, "add") is None)
expect("in place is its base", kp.base_name(torch.ops.aten.add_.Tensor) == "add")
expect("dunders keep their name", kp.base_name(torch.ops.aten.__and__.Tensor) == "__and__")

# the mode replaces every output of a targeted operator, integer indices included
mode = kp.Dispatch({"names": {"max": "reduction"}, "prefixes": []}, frozenset({0}), 5)
x = torch.randn(32, 16)
with mode:
    values, indices = torch.max(x, dim=1)
plain_v, plain_i = torch.max(x, dim=1)
expect("max's values and indices both replaced (%s)" % mode.perturbed,
       mode.perturbed == [0] and not torch.equal(values, plain_v) and not torch.equal(indices, plain_i))

for f in failures:
    print("FAIL:", f)
print("probe check: %d failures" % len(failures))
sys.exit(1 if failures else 0)
