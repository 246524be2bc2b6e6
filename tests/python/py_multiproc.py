"""py_multiproc.py LIBDIR [terminate] - multiprocessing workers that launch
kernels, started with 'fork' and with 'spawn'.  The parent touches CUDA only
after its fork workers are done (CUDA cannot be used in a fork child of a
process that initialised it).

By default the pools are closed and joined: every worker exits normally.
With 'terminate' they end the way `with Pool(...)` ends them,
Pool.terminate(), which sends SIGTERM to workers still alive (all of them,
since each waits for work after finishing its task).  stdout is deterministic.
"""
import multiprocessing as mp
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
import standin_cuda  # noqa: E402


def work(args):
    libdir, index = args
    cuda = standin_cuda.Cuda(libdir)
    v = cuda.to_device([float((i + index) % 7) for i in range(128)])
    cuda.scale(v, 128, 1.0 + index, launches=1 + index)
    cuda.sync()
    return index, standin_cuda.checksum(cuda.to_host(v, 128))


def main(libdir, terminate):
    for method in ("fork", "spawn"):
        ctx = mp.get_context(method)
        pool = ctx.Pool(2)
        for index, digest in pool.map(work, [(libdir, i) for i in range(3)]):
            print(method, index, digest, flush=True)
        if terminate:
            pool.terminate()
        else:
            pool.close()
        pool.join()
    index, digest = work((libdir, 9))
    print("parent", index, digest, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "terminate"))
