"""kaudit_events.py - the runner's event log and its stages (docs/audit.md,
"The runner's log"): one JSON object per line, written and flushed at once,
so that what was done before a crash or a kill is kept.

Apart from kaudit_runner.py because every part of the runner writes events;
imported first, before torch, since the events' "t" counts torch's import.
"""

import contextlib
import json
import os
import time
import traceback

STARTED = time.monotonic()  # before torch's import: the events' "t" counts it


class Log:
    """The event log: one JSON object per line, written and flushed at once.
    The file descriptor is opened before any task code runs."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def event(self, event_name, **fields):
        # t: seconds since the runner started (where an audit's time goes)
        fields = {"event": event_name, "t": round(time.monotonic() - STARTED, 3), **fields}
        line = json.dumps(fields, allow_nan=False, default=str) + "\n"
        data = line.encode()
        while data:
            n = os.write(self.fd, data)
            data = data[n:]


def short_error(exc):
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(tb[-3:]).strip()
    return f"{type(exc).__name__}: {exc}"[:500], text[-2000:]


class StageFailed(Exception):
    pass


class EvidenceLost(BaseException):
    """The runner itself failed where the evidence depends on it: a file of
    its own it cannot write (code evidence-unwritable), or the reference
    refused by the kernel (code reference-refused: EPERM, EACCES or EXDEV,
    which no input value causes).  Both parties run as the worker's uid,
    which owns the runner's folders, and Landlock governs no chmod: the
    candidate's process can make either happen.  Never a property of a slot,
    to be replaced or skipped as one the task cannot take: the audit ends,
    INCONCLUSIVE with the code.  A BaseException, so that no handler of the
    reference's errors (except Exception) takes it for one of them."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


@contextlib.contextmanager
def writing_evidence(what):
    """A write of the runner's own ("cannot WHAT: why"): its OSError is
    EvidenceLost, evidence-unwritable."""
    try:
        yield
    except OSError as exc:
        raise EvidenceLost("evidence-unwritable", "cannot %s: %s" % (what, exc)) from exc


def stage(log, name, fn):
    t0 = time.monotonic()
    try:
        value = fn()
    except EvidenceLost:
        raise   # the audit's end, said once where the runner stops
    except BaseException as exc:  # SystemExit from a task too
        if isinstance(exc, KeyboardInterrupt):
            raise
        msg, tb = short_error(exc)
        log.event("stage", stage=name, status="error", error=msg, traceback=tb,
                  seconds=round(time.monotonic() - t0, 3))
        raise StageFailed(name)
    log.event("stage", stage=name, status="ok", seconds=round(time.monotonic() - t0, 3))
    return value
