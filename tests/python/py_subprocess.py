"""py_subprocess.py LIBDIR LOG - a Python harness that runs a child with a
scrubbed environment (subprocess.run(..., env={})), the way some benchmark
runners isolate candidates.  The child must still be traced: kaudit has to put
its variables back.  Both launch kernels; the child also calls cuBLAS.
stdout is deterministic."""
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
import standin_cuda  # noqa: E402


def parent(libdir, log):
    cuda = standin_cuda.Cuda(libdir, log)
    v = cuda.to_device([float(i % 9) for i in range(300)])
    cuda.scale(v, 300, 0.5)
    cuda.sync()
    print("parent:", standin_cuda.checksum(cuda.to_host(v, 300)), flush=True)
    child = subprocess.run([sys.executable, __file__, "child", libdir, log], env={},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stdout.write(child.stdout)
    sys.stderr.write(child.stderr)
    print("child returned", child.returncode, flush=True)
    return 0


def child(libdir, log):
    cuda = standin_cuda.Cuda(libdir, log)
    v = cuda.to_device([float(i % 5) for i in range(200)])
    cuda.scale(v, 200, 2.0, launches=2)
    c = cuda.sgemm(8, 6, 4)
    cuda.sync()
    print("child:", standin_cuda.checksum(cuda.to_host(v, 200)), standin_cuda.checksum(c))
    return 4


if __name__ == "__main__":
    if sys.argv[1] == "child":
        sys.exit(child(sys.argv[2], sys.argv[3]))
    sys.exit(parent(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "-"))
