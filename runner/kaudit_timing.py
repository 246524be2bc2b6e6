"""kaudit_timing.py - the measurement tier's protocol on the runner's side
(docs/timing.md): one call's time (Timer) and the paired batches of two
arms; the statistics are kaudit's, in C.

Apart from kaudit_runner.py, which builds the arms: the timing itself.
bench/timing_tracing.py uses these too.
"""

import time

import torch


# The measurement tier's protocol (paper 3.4 and Appendix A; docs/timing.md):
# 10 warm-ups per arm, then three paired batches of 20 timings per arm, each
# batch in blocks of 10 in the order given (ABBA: A ten times, B twenty, A
# ten).  The statistics are kaudit's, in C (timing/timing_stats.c); the
# runner only times and logs.
TIMING_WARMUPS = 10
TIMING_PER_BATCH = 20
AA_ORDERS = ("ABBA", "BAAB", "ABBA")


class Timer:
    """One call's time in ms.  On a GPU with CUDA events on the current
    stream, as harnesses time (start.record(); call; end.record();
    end.synchronize()); with guard=True a full-device synchronize comes
    before the start and before the end event, so that work on any stream
    is inside (the stream differential's guarded arm).  On the CPU,
    time.perf_counter_ns around the call."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        if self.cuda:
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    @property
    def clock(self):
        return "cuda-event" if self.cuda else "perf-counter"

    def time(self, call, guard=False):
        if not self.cuda:
            t0 = time.perf_counter_ns()
            call()
            return (time.perf_counter_ns() - t0) / 1e6
        if guard:
            torch.cuda.synchronize()
        self.start.record()
        call()
        if guard:
            torch.cuda.synchronize()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end)


def paired_batches(arm_a, arm_b, orders):
    """arm_a, arm_b: () -> ms of one timed call.  Warm-ups alternate the
    arms; each batch's blocks follow its order.  Returns the batches with
    each arm's latencies in the order taken."""
    for _ in range(TIMING_WARMUPS):
        arm_a()
        arm_b()
    block = TIMING_PER_BATCH // 2
    batches = []
    for order in orders:
        lat = {"A": [], "B": []}
        for arm in order:
            f = arm_a if arm == "A" else arm_b
            lat[arm].extend(f() for _ in range(block))
        batches.append({"order": order, "a": lat["A"], "b": lat["B"]})
    return batches
