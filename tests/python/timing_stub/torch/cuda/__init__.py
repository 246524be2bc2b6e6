"""Stand-in torch.cuda: Event and Stream as Python classes over a C base, as in PyTorch."""


class _EventBase:
    pass


class Event(_EventBase):
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self, stream=None):
        import time
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end_event):
        return (end_event.t - self.t) * 1000.0


class Stream:
    def synchronize(self):
        pass


def synchronize(device=None):
    pass
