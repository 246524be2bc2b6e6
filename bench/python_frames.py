"""python_frames.py [CALLS] - what Python-side provenance costs per call.

Times CALLS calls of a method of a watched class (ModelNew, kaudit's default)
and of the same method on an unwatched class, best of 5, in ns per call.
bench/python_frames.sh runs it under `kaudit run` with provenance on and off.
"""
import sys
import time


class ModelNew:
    def forward(self, x):
        return x


class Unwatched:
    def forward(self, x):
        return x


def loop(obj, n):
    f = obj.forward
    t0 = time.perf_counter()
    for i in range(n):
        f(i)
    return time.perf_counter() - t0


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    loop(ModelNew(), 1000)
    loop(Unwatched(), 1000)
    watched = min(loop(ModelNew(), n) for _ in range(5))
    unwatched = min(loop(Unwatched(), n) for _ in range(5))
    print("python %d.%d.%d watched %.1f ns/call unwatched %.1f ns/call"
          % (sys.version_info[:3] + (watched / n * 1e9, unwatched / n * 1e9)))


if __name__ == "__main__":
    main()
