"""py_exec_harness.py LIBDIR CASE - a KernelBench-style harness in miniature:
the reference's and the candidate's sources are exec'd from strings in one
process (every file name reads "<string>"), nothing is marked, and the
harness does work of its own.  The stand-in CUDA libraries are driven through
ctypes (standin_cuda.py).  The trace must let the analyzer tell whose work is
whose from the Python side alone (tests/test_run_provenance.c).

CASE picks the candidate:
  delegates       ModelNew.forward calls cublasSgemm (through the harness's helper)
  own_kernel      ModelNew.forward launches its own kernel
  thread          ModelNew.forward runs its cublasSgemm on a thread it starts
  via_reference   ModelNew.forward calls the reference's Model.forward
  local_class     ModelNew is defined inside a function (qualname with <locals>)
  file            the candidate is a file (cand_file.py, class Solution) imported normally
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
import standin_cuda  # noqa: E402

REFERENCE = '''
class Model:
    def forward(self, cuda):
        return cuda.sgemm(16, 16, 16)
'''

CANDIDATES = {
    "delegates": '''
class ModelNew:
    def forward(self, cuda):
        return cuda.sgemm(16, 16, 16)
''',
    "own_kernel": '''
class ModelNew:
    def forward(self, cuda):
        v = cuda.to_device([1.0] * 256)
        cuda.scale(v, 256, 2.0)
        return cuda.to_host(v, 256)
''',
    "thread": '''
import threading

class ModelNew:
    def forward(self, cuda):
        out = []
        worker = threading.Thread(target=lambda: out.append(cuda.sgemm(16, 16, 16)))
        worker.start()
        worker.join()
        return out[0]
''',
    "via_reference": '''
class ModelNew:
    def forward(self, cuda):
        return Model().forward(cuda)
''',
    "local_class": '''
def build():
    class ModelNew:
        def forward(self, cuda):
            return cuda.sgemm(16, 16, 16)
    return ModelNew

ModelNew = build()
''',
}

cuda = standin_cuda.Cuda(sys.argv[1], sys.argv[3] if len(sys.argv) > 3 else None)
namespace = {}
exec(compile(REFERENCE, "<string>", "exec"), namespace)
reference = namespace["Model"]().forward(cuda)
if sys.argv[2] == "file":
    import cand_file  # noqa: E402
    candidate = cand_file.Solution().run(cuda)
else:
    exec(compile(CANDIDATES[sys.argv[2]], "<string>", "exec"), namespace)
    candidate = namespace["ModelNew"]().forward(cuda)
harness_own = cuda.sgemm(8, 8, 8)   # the harness's own work: nobody's candidate work
cuda.sync()
print("reference", standin_cuda.checksum(reference))
print("candidate", standin_cuda.checksum(candidate))
print("harness", standin_cuda.checksum(harness_own))
