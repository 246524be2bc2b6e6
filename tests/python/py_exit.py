"""py_exit.py LIBDIR - launches kernels, synchronises, and leaves with
os._exit(5): no atexit handlers, no interpreter shutdown.  The trace must
still hold the kernels and say the process ended with _exit(5)."""
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
import standin_cuda  # noqa: E402

cuda = standin_cuda.Cuda(sys.argv[1])
v = cuda.to_device([float(i % 3) for i in range(64)])
cuda.scale(v, 64, 3.0, launches=3)
cuda.sync()
print("before _exit:", standin_cuda.checksum(cuda.to_host(v, 64)), flush=True)
os._exit(5)
