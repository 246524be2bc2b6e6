"""kaudit_turns.py - concurrent audits on one device take turns
(docs/timing.md, "Concurrent audits"): the shared and exclusive flocks
around the runner's work and its timed phases.

Apart from kaudit_runner.py: the locking protocol between audits is its
own job; the runner only says where it pauses and what it times.
"""

import contextlib
import fcntl
import os
import stat
import time

import torch

from kaudit_events import short_error


class DeviceTurns:
    """Concurrent audits on one device take turns (docs/timing.md,
    "Concurrent audits"): a timed phase has the device to itself.  Every
    runner holds a shared flock on DIR/<device>.lock while it works on the
    device and lets go of it at pause points (between slots, before the
    probe, between weak surfaces) and while the candidate is imported and
    built (compilers run on the CPU for minutes); a timed phase holds it
    exclusively.  DIR/<device>.gate gives the timed phases precedence: a
    timed phase holds it exclusively while it waits and runs, and a runner
    passes through it (shared, then let go) before it shares the device
    again, so no stream of shared holders keeps a timed phase out.

    <device> is the GPU's UUID (the same card under any CUDA_VISIBLE_DEVICES
    numbering) or "cpu".  Every wait is bounded (plan timing_lock_wait_s): a
    timed phase past it is timed anyway and its event says so ("not-held"),
    and kaudit withholds its speedup; a runner that cannot share within it
    goes on without sharing and tries again, without waiting, at each later
    pause ("share_timeouts"), since whoever holds the gate that long
    (another audit's candidate can flock it too) must not stall every audit
    on the device.  One descriptor per file, so that this process's own
    locks never conflict with each other; a lock error (the candidate closed
    a descriptor, say) ends the turns, never the audit.  The functions are
    bound at import, before the candidate can patch them; each timed phase is
    one event "timing_turn" with CLOCK_MONOTONIC times (one clock for every
    process of the host), and the time spent waiting to share is the event
    "device_share" at the end."""

    _open, _close, _flock, _now, _sleep = os.open, os.close, fcntl.flock, time.clock_gettime, time.sleep
    _fstat, _stat, _fchmod, _isreg = os.fstat, os.stat, os.fchmod, stat.S_ISREG

    def __init__(self, plan, device, log, guard):
        # shared whenever kaudit gave a directory (timing on or off: an
        # untimed audit's work must stay out of others' timed windows too)
        self.dir = plan.get("timing_lock_dir")
        # whether the timed phases hold the device (kaudit decides: the
        # timing checks, and on a GPU the timed calls, which run always)
        self.times = bool(plan.get("timing_turns"))
        self.wait_s = float(plan.get("timing_lock_wait_s", 120))
        self.device = device
        self.log = log
        self.guard = guard
        self.key = None
        self.fd = self.gate = -1
        self.sharing = False
        self.shared_wait_s = 0.0
        self.pauses = 0
        self.share_timeouts = 0
        self.error = None

    def _key(self):
        if self.device.type != "cuda":
            return "cpu"
        uuid = getattr(torch.cuda.get_device_properties(self.device), "uuid", None)
        if uuid is None:
            # an index names different cards under different CUDA_VISIBLE_DEVICES
            raise RuntimeError("this PyTorch gives no GPU UUID to name the device's lock by")
        return "gpu-" + str(uuid)

    @staticmethod
    def _clock():
        return DeviceTurns._now(time.CLOCK_MONOTONIC)

    def _fail(self, exc):
        self.error = self.error or short_error(exc)[0]
        self.sharing = False

    def _ready(self):
        """The two descriptors, opened once; False (and why) when they cannot be."""
        if not self.dir or self.error:
            return False
        if self.fd >= 0:
            return True
        try:
            self.key = self._key()
            with self.guard.own():
                self.fd = self._open_lock(self._path(".lock"))
                self.gate = self._open_lock(self._path(".gate"))
            return True
        except Exception as exc:
            self._fail(exc)
            return False

    def _path(self, suffix):
        return os.path.join(self.dir, self.key + suffix)

    @staticmethod
    def _open_lock(path):
        """Read-only (flock needs no more), never through a link, a FIFO or
        anything but a regular file another user planted in the shared
        directory, and made only when missing (a file another user made
        opens without O_CREAT, which fs.protected_regular refuses in a sticky
        directory), readable by every user whatever our umask."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        for _ in range(3):
            fd, made = -1, False
            try:
                fd = DeviceTurns._open(path, flags)
            except FileNotFoundError:
                try:
                    fd, made = DeviceTurns._open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
                except FileExistsError:
                    continue   # made by another audit meanwhile: open it as it is
            if not DeviceTurns._isreg(DeviceTurns._fstat(fd).st_mode):
                DeviceTurns._close(fd)
                raise OSError("'%s' is not a regular file" % path)
            if made:
                DeviceTurns._fchmod(fd, 0o644)
            return fd
        raise OSError("cannot open or make the lock file '%s'" % path)

    def _try(self, fd, mode, t0, wait=True):
        """flock(fd, mode) within wait_s of t0 (at once without wait): True,
        or False past it."""
        while True:
            try:
                DeviceTurns._flock(fd, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if not wait or self._clock() - t0 >= self.wait_s:
                    return False
                DeviceTurns._sleep(0.005)

    def share(self):
        """Waits while a timed phase holds or waits for the device, for at
        most the bound, and only once: after a timeout, later attempts do not
        wait."""
        if self.sharing or not self._ready():
            return
        t0 = self._clock()
        wait = self.share_timeouts == 0
        try:
            ok = self._try(self.gate, fcntl.LOCK_SH, t0, wait)
            if ok:
                ok = self._try(self.fd, fcntl.LOCK_SH, t0, wait)
                DeviceTurns._flock(self.gate, fcntl.LOCK_UN)
        except OSError as exc:
            self._fail(exc)
            return
        self.shared_wait_s += self._clock() - t0
        self.sharing = ok
        self.share_timeouts += not ok

    def unshare(self):
        if self.sharing:
            self.sharing = False
            try:
                DeviceTurns._flock(self.fd, fcntl.LOCK_UN)
            except OSError as exc:
                self._fail(exc)

    def pause(self):
        """Lets a waiting timed phase in (and waits for it to end)."""
        if self.sharing or self.share_timeouts:
            self.pauses += 1
            self.unshare()
            self.share()

    @contextlib.contextmanager
    def released(self):
        was = self.sharing
        self.unshare()
        try:
            yield
        finally:
            if was:
                self.share()

    @contextlib.contextmanager
    def held(self, phase_name):
        """The device to itself for a timed phase (bounded wait)."""
        if not self.dir or not self.times:
            yield
            return
        was = self.sharing or self.share_timeouts
        self.unshare()   # never wait for the device while holding a share of it
        record = {"phase": phase_name}
        t0 = self._clock()
        got_gate = got_device = False
        try:
            if not self._ready():
                raise RuntimeError(self.error)
            record["device"] = self.key
            got_gate = self._try(self.gate, fcntl.LOCK_EX, t0)
            got_device = got_gate and self._try(self.fd, fcntl.LOCK_EX, t0)
            # the file locked must be the one the path names: a lock file
            # unlinked and made again would split the audits between two
            if got_device and DeviceTurns._stat(self._path(".lock")).st_ino != DeviceTurns._fstat(self.fd).st_ino:
                raise RuntimeError("the lock file was replaced")
            record["status"] = "held" if got_device else "not-held"
        except Exception as exc:
            record["status"] = "error"
            record["error"] = short_error(exc)[0]
        start = self._clock()
        record["waited_s"] = round(start - t0, 3)
        record["from"] = round(start, 6)
        try:
            yield
        finally:
            record["until"] = round(self._clock(), 6)
            self.log.event("timing_turn", **record)   # before anything below can raise
            try:
                if got_device:
                    DeviceTurns._flock(self.fd, fcntl.LOCK_UN)
                if got_gate:
                    DeviceTurns._flock(self.gate, fcntl.LOCK_UN)
            except OSError as exc:
                self._fail(exc)
            if was:
                self.share()

    def report(self):
        if self.dir:
            self.log.event("device_share", device=self.key, waited_s=round(self.shared_wait_s, 3),
                           pauses=self.pauses, share_timeouts=self.share_timeouts, error=self.error)
