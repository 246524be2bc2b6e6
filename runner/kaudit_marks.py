"""kaudit_marks.py - what both parties' processes share: the NVTX marks and
ranges they put around their work (the analyzer attributes the recorded
GPU work by them: docs/audit.md, "What the runner does"), and loading a
task's file as a module."""

import importlib.util
import sys

import torch


class Marks:
    def __init__(self, on):
        self.on = on

    def push(self, msg):
        if self.on:
            torch.cuda.nvtx.range_push(msg)

    def pop(self):
        if self.on:
            torch.cuda.nvtx.range_pop()

    def mark(self, msg):
        if self.on:
            torch.cuda.nvtx.mark(msg)


class phase:
    def __init__(self, marks, msg):
        self.marks, self.msg = marks, msg

    def __enter__(self):
        self.marks.push(self.msg)

    def __exit__(self, *exc):
        self.marks.pop()
        return False


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
