"""Writes the tensor file that tests/tensor_file_python_check.c reads back:
every dtype the semantic axis meets, a non-contiguous view, nesting and
scalars.  Usage: write_tensor_sample.py RUNNER_DIR OUT_FILE"""

import sys

sys.path.insert(0, sys.argv[1])
import torch  # noqa: E402
import kaudit_tensors  # noqa: E402

inf, nan = float("inf"), float("nan")
out = (
    torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4,
    {"a": torch.tensor([1.0 / 3, -2.5e-300, inf], dtype=torch.float64),
     "b": (3, 2.5, True, None)},
    [torch.tensor([1.0, -2.0, 65504.0, 2.0 ** -24, inf, nan], dtype=torch.float16),
     torch.tensor([1.0, 3.0, -0.5, 2.0 ** 100], dtype=torch.bfloat16)],
    # Transposed view: strides (1, 4); the file must hold it in C order.
    torch.arange(12, dtype=torch.float32).reshape(3, 4).t(),
    "not a tensor",
    torch.tensor([-(2 ** 40), 7], dtype=torch.int64),
    torch.tensor([True, False, True]),
    (),
    # Lazy conjugate view: its memory holds +2j and -4j, its values do not.
    torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64).conj(),
    # channels_last: contiguous in memory, but not in C order.
    torch.arange(8, dtype=torch.float32).reshape(1, 2, 2, 2).contiguous(
        memory_format=torch.channels_last),
    1 << 70,  # no int64 can hold it: kept as an opaque leaf
)
inputs = [torch.zeros(0, 5), torch.tensor(2.0)]
leaves = kaudit_tensors.flatten(out) + kaudit_tensors.flatten(inputs, prefix="input")
kaudit_tensors.write_tensor_file(sys.argv[2], leaves)
print("wrote %d leaves with torch %s" % (len(leaves), torch.__version__))
