"""py_timing_harness.py LIBDIR CASE [LOG] - an unmodified harness that times the
candidate with time.perf_counter and marks nothing (no NVTX, no guard): the
reference and the candidate are exec'd from strings, as in py_exec_harness.py.
tests/test_run_provenance.c checks what kaudit's sitecustomize reports about
the timing primitives (docs/python-provenance.md, "Timing primitives").

CASE:
  candidate   ModelNew.forward replaces time.perf_counter with a function that
              returns a made-up time (the harness then reports a tiny time)
  harness     the harness itself wraps time.perf_counter (a profiler would),
              outside any watched frame
  event       the harness imports (a stand-in) torch after kaudit's sitecustomize
              ran and times with torch.cuda.Event; ModelNew.forward replaces
              torch.cuda.Event.elapsed_time
  none        nobody replaces anything
  toplevel    the candidate's module replaces time.perf_counter in its
              top-level code, which the harness exec's outside any watched
              frame, into the namespace it exec'd the reference into
              (KernelBench shares one context dict)
  reftoplevel the reference's module does the same (not the candidate's doing)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
import time  # noqa: E402

import standin_cuda  # noqa: E402

REFERENCE = '''
class Model:
    def forward(self, cuda):
        return cuda.sgemm(16, 16, 16)
'''

CANDIDATES = {
    "candidate": '''
import time

def _fake_perf_counter(_clock=[0.0]):
    _clock[0] += 1e-6
    return _clock[0]

class ModelNew:
    def forward(self, cuda):
        time.perf_counter = _fake_perf_counter
        return cuda.sgemm(16, 16, 16)
''',
    "harness": '''
class ModelNew:
    def forward(self, cuda):
        return cuda.sgemm(16, 16, 16)
''',
}
CANDIDATES["none"] = CANDIDATES["harness"]
CANDIDATES["reftoplevel"] = CANDIDATES["harness"]
CANDIDATES["toplevel"] = '''
import time

def _fake_perf_counter(_clock=[0.0]):
    _clock[0] += 1e-6
    return _clock[0]

time.perf_counter = _fake_perf_counter

class ModelNew:
    def forward(self, cuda):
        return cuda.sgemm(16, 16, 16)
'''
REFERENCE_TOPLEVEL = '''
import time

def _reference_perf_counter(_real=time.perf_counter):
    return _real()

time.perf_counter = _reference_perf_counter

class Model:
    def forward(self, cuda):
        return cuda.sgemm(16, 16, 16)
'''
CANDIDATES["event"] = '''
import torch

class ModelNew:
    def forward(self, cuda):
        torch.cuda.Event.elapsed_time = lambda self, end: 0.001
        return cuda.sgemm(16, 16, 16)
'''

case = sys.argv[2]
if case == "event":
    import os

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "timing_stub"))
    import torch  # after kaudit's sitecustomize ran, as in a real harness
cuda = standin_cuda.Cuda(sys.argv[1], sys.argv[3] if len(sys.argv) > 3 else None)
if case == "harness":
    _real_perf_counter = time.perf_counter

    def harness_perf_counter():
        return _real_perf_counter()

    time.perf_counter = harness_perf_counter
namespace = {}
exec(compile(REFERENCE_TOPLEVEL if case == "reftoplevel" else REFERENCE, "<string>", "exec"), namespace)
reference = namespace["Model"]().forward(cuda)
exec(compile(CANDIDATES[case], "<string>", "exec"), namespace)
model = namespace["ModelNew"]()
times = []
if case == "event":
    for _ in range(3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        candidate = model.forward(cuda)
        cuda.sync()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
for _ in range(3 if case != "event" else 0):
    start = time.perf_counter()
    candidate = model.forward(cuda)
    cuda.sync()
    times.append(time.perf_counter() - start)
print("reference", standin_cuda.checksum(reference))
print("candidate", standin_cuda.checksum(candidate))
print("timed", len(times), "iterations, all positive:", all(t > 0 for t in times))
sys.stderr.write("harness done\n")
