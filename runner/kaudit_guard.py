"""kaudit_guard.py - the runner's confinement of the tasks' Python-level
writes (docs/audit.md, "Confinement"): an audit hook that refuses, and
logs, a write outside the audit's directories.

Apart from kaudit_runner.py: it is the runner's one defence of its
directories, and knows nothing of slots or parties.
"""

import contextlib
import os


class WriteGuard:
    """A Python audit hook (PEP 578: it cannot be removed once added) that
    refuses the tasks' Python-level writes outside their directories: the
    working directory, TMPDIR and the build caches (plan "write_roots").
    Each refused write is logged first ("write_outside"), so the audit
    says what was tried.  Native code bypasses audit hooks; Landlock, which
    kaudit applies to the whole worker, covers it (docs/audit.md,
    "Confinement").  The runner's own files (the tensor files and their
    directory) are written inside own(); the event log's descriptor was
    opened before the hook, and os.write is no audited event."""

    _FLAG_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    # event -> the positions of the paths it changes, and its dir_fd position
    _EVENTS = {
        "os.remove": ((0,), 1), "os.rmdir": ((0,), 1), "os.mkdir": ((0,), 2),
        "os.rename": ((0, 1), None), "os.link": ((1,), None), "os.symlink": ((1,), 2),
        "os.truncate": ((0,), None), "os.chmod": ((0,), 2), "os.chown": ((0,), 3),
        "os.utime": ((0,), 3), "shutil.copyfile": ((1,), None), "shutil.copytree": ((1,), None),
        "shutil.move": ((0, 1), None), "shutil.rmtree": ((0,), 1),
    }

    def __init__(self, roots, log):
        self.roots = [os.path.realpath(r) for r in roots]
        self.beneath = tuple(r.rstrip("/") + "/" for r in self.roots)
        self.log = log
        self.party = "reference"
        self._own = 0
        self._busy = False

    @contextlib.contextmanager
    def own(self):
        self._own += 1
        try:
            yield
        finally:
            self._own -= 1

    def _inside(self, path, dir_fd=None):
        path = os.fsdecode(os.fspath(path))
        # the os.* audit events pass dir_fd -1 when none was given: the working directory
        if not os.path.isabs(path) and dir_fd is not None and dir_fd >= 0:
            base = os.readlink("/proc/self/fd/%d" % dir_fd)
        else:
            base = os.getcwd()
        real = os.path.realpath(os.path.join(base, path))
        return real in self.roots or real.startswith(self.beneath), real

    def hook(self, event, args):
        if self._own or self._busy:
            return
        if event == "open":
            path, mode, flags = args
            writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool(flags & self._FLAG_WRITES)
            if not writes or path is None or isinstance(path, int):
                return
            targets, dir_fd = (path,), None
        elif event in self._EVENTS:
            where, fd_at = self._EVENTS[event]
            targets = tuple(args[i] for i in where if i < len(args) and not isinstance(args[i], int))
            dir_fd = args[fd_at] if fd_at is not None and fd_at < len(args) else None
        else:
            return
        self._busy = True
        try:
            for t in targets:
                try:
                    inside, real = self._inside(t, dir_fd)
                except (TypeError, ValueError, OSError):
                    inside, real = False, repr(t)
                if not inside and event == "os.mkdir" and os.path.lexists(real):
                    # os.makedirs(..., exist_ok=True) on a folder that is
                    # there changes nothing: the kernel answers EEXIST
                    # before any write right is asked for (and Landlock
                    # still refuses the mkdir should the folder go first)
                    continue
                if not inside:
                    self.log.event("write_outside", party=self.party, op=event, path=real)
                    raise PermissionError(13, "kaudit: writing outside the audit's directories is refused", real)
        finally:
            self._busy = False
