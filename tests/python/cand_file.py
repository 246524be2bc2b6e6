"""cand_file.py - a candidate that is a source file and uses no KernelBench
names: kaudit finds its frames by file (KAUDIT_PYTHON_WATCH=cand_file.py)."""


class Solution:
    def run(self, cuda):
        return cuda.sgemm(16, 16, 16)
