"""kaudit_party_link.py - the runner's end of the candidate's process
(kaudit_party.py; docs/audit.md, "Two parties, two processes").

The runner starts the candidate's process under `kaudit confine` (its own
Landlock domain, seccomp, no_new_privs), hands it each call's inputs (a
sealed memory file passed over a socket of their own; else a file in a
directory only the runner writes), asks it for one call at a time,
and copies the outputs it wrote into the audit's tensors itself, refusing
anything but a regular file of its own (no link to a file it cannot read).

Apart from kaudit_runner.py: the channel and the process's lifetime are
their own job; the runner only says what to ask.
"""

import array
import fcntl
import importlib.util
import json
import os
import select
import socket
import stat
import struct
import subprocess
import sys
import termios
import time

from kaudit_events import writing_evidence

# No torch at import: the runner starts the candidate's process before its own
# PyTorch import (start_early), so that the two imports overlap.

# An answer's line is at most this long (events included): a process that
# sends more is not answering any more.
MAX_LINE = 1 << 24


# A handed object's token when it went as a memory file (kaudit_party.HandedFiles).
MEMORY_PREFIX = "memfd:"
SEALS = ("F_SEAL_SHRINK", "F_SEAL_GROW", "F_SEAL_WRITE", "F_SEAL_SEAL")
# Memory files sent and not yet taken, at most (the state and the
# initialization inputs go together before the build; every other request
# takes its one before the next is handed).  A socket pair's own queue holds
# hundreds, each pinning up to 4 GiB: the bound is the runner's.
MAX_UNTAKEN = 4


def unsent_bytes(sock):
    """Bytes this end sent that the other has not received yet (SIOCOUTQ)."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]


def memory_channel():
    """A datagram socket pair for handing sealed memory files to the
    candidate's process, or (None, why) where this Python or kernel has no
    memfd, no descriptor passing or no seals (the hand-off then goes through
    files), or KAUDIT_HANDOFF=file asks for files."""
    if os.environ.get("KAUDIT_HANDOFF") == "file":
        return None, "KAUDIT_HANDOFF=file"
    if not (hasattr(os, "memfd_create") and hasattr(socket.socket, "sendmsg")
            and all(hasattr(fcntl, s) for s in SEALS + ("F_ADD_SEALS",))):
        return None, "no memfd_create, sendmsg or file seals in this Python"
    try:
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM), None
    except OSError as exc:
        return None, "no socket pair: %s" % exc


class NotOwnFile(OSError):
    """A file the candidate's process named that is not a regular file of its own."""


class PartyGone(Exception):
    """The candidate's process ended, or stopped answering in the channel's terms."""


def torch_dir():
    """PyTorch's package folder, found without importing it (None when absent)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec else None
    return os.path.dirname(origin) if origin else None


# The words of a candidate that compiles a PyTorch extension when imported.
BUILD_WORDS = (b"load_inline", b"cpp_extension")


def builds_expected(path, limit=1 << 22):
    """Whether the candidate's source names PyTorch's extension builder: where
    its process imports torch._dynamo (kaudit_probe.Preimport).  A guess
    from text the candidate wrote: a wrong one costs seconds, never
    evidence."""
    try:
        with open(path, "rb") as f:
            text = f.read(limit)
    except (OSError, TypeError):
        return False
    return any(w in text for w in BUILD_WORDS)


def start_early(argv):
    """The candidate's process started from the runner's plan (argv[1]) before
    the runner imports PyTorch: both interpreters import it at once, where the
    candidate's used to wait for the runner's import and the reference's build
    (seconds on a GPU machine).  None when the plan says not to (describe_only,
    KAUDIT_PARTY_START=late) or cannot be read, or the start fails: the runner
    then starts it at its usual point, and says why if that fails too."""
    if os.environ.get("KAUDIT_PARTY_START") in ("late", "after-reference") or len(argv) != 2:
        return None
    try:
        with open(argv[1]) as f:
            plan = json.load(f)
        if plan.get("kaudit_plan") != 1 or plan.get("describe_only") or "party" not in plan:
            return None
        return PartyLink(plan, None, None, wait=False)
    except Exception:  # the runner reads the plan again and reports it
        return None


class PartyLink:
    def __init__(self, plan, log, guard, wait=True):
        """Starts the candidate's process; with wait, until it is ready (else
        wait_ready() later: its Python and PyTorch import meanwhile).  Without
        a log (start_early) its "party started" event waits for attach()."""
        spec = plan["party"]
        self.log = log
        self.guard = guard
        self.handoff = spec["handoff_dir"]
        self.out = spec["out_dir"]
        self.gone = None
        self.confinement = None
        self.ready = False
        req_r, req_w = os.pipe()
        ans_r, ans_w = os.pipe()
        # a call's inputs (KernelBench's reach 4 GiB) as a sealed memory file
        # over this socket: written once in memory, never to disk and back
        pair, self.memory_why = memory_channel()
        self.fdsock, theirs = pair if pair else (None, None)
        self.untaken = 0   # memory files sent since the socket was last empty
        argv = [spec["kaudit"], "confine"]
        for r in self._read_roots(spec):
            argv += ["--read", r]
        for w in spec["write_roots"]:
            argv += ["--write", w]
        argv += ["--report-fd", str(ans_w), "--", sys.executable, os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "kaudit_party.py"), str(req_r), str(ans_w)]
        passed = (req_r, ans_w)
        if theirs is not None:
            argv.append(str(theirs.fileno()))
            passed += (theirs.fileno(),)
        env = dict(os.environ)
        # its own caches and home: the runner's environment names the reference's
        env.update({str(k): str(v) for k, v in (spec.get("env") or {}).items()})
        if builds_expected(plan.get("candidate")):
            env["KAUDIT_PREIMPORT_AT"] = "build"   # kaudit_probe.Preimport: beside its compilers
        else:
            env.pop("KAUDIT_PREIMPORT_AT", None)
        self.proc = subprocess.Popen(argv, pass_fds=passed, cwd=spec["work_dir"], stdin=subprocess.DEVNULL,
                                     env=env)
        os.close(req_r)
        os.close(ans_w)
        if theirs is not None:
            theirs.close()
        self.wfd = req_w
        self.rfd = ans_r
        self.buf = b""
        self.started = {"pid": self.proc.pid, "argv_roots": len(argv),
                        "handoff": "memory" if self.fdsock is not None else "files: " + str(self.memory_why)}
        if log is not None:
            self.log.event("party", status="started", **self.started)
        if wait:
            self.wait_ready()

    def attach(self, log, guard, early):
        """The runner's log and write guard for a process start_early started
        (its "party started" event, with early: seconds since then)."""
        self.log = log
        self.guard = guard
        self.log.event("party", status="started", early=round(early, 3), **self.started)

    def wait_ready(self):
        """Its confinement report (logged), then its "ready" (logged with the
        seconds this process waited for it); PartyGone when it ends first."""
        t0 = time.monotonic()
        first = self._line()
        if first is None or first.get("op") != "confinement":
            raise PartyGone(self._why("before it reported its confinement"))
        first.pop("op", None)
        self.confinement = first
        self.log.event("party_confinement", **first)
        ready = self._line()
        if ready is None or ready.get("op") != "ready":
            raise PartyGone(self._why("before it was ready"))
        self.ready = True
        self.log.event("party", status="ready", waited=round(time.monotonic() - t0, 3))

    @staticmethod
    def _read_roots(spec):
        """kaudit's read roots and the Python install this runner runs from
        (sys.prefix, the import path, torch), less any that holds the
        audit's evidence (the runner's directory, the plan)."""
        roots = list(spec["read_roots"])
        for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, torch_dir()] + sys.path:
            if p and os.path.isdir(p):
                roots.append(os.path.realpath(p))
        evidence = [os.path.realpath(e) for e in spec["evidence"]]
        kept = []
        for r in roots:
            holds = any(os.path.commonpath([r, e]) == r for e in evidence)
            if not holds and r not in kept:
                kept.append(r)
        return kept

    def _why(self, when):
        code = self.proc.poll()
        if code is None:
            return "the candidate's process stopped answering %s" % when
        if code < 0:
            return "the candidate's process was killed by signal %d %s" % (-code, when)
        return "the candidate's process exited with status %d %s" % (code, when)

    def _line(self):
        while b"\n" not in self.buf:
            if len(self.buf) > MAX_LINE:
                return None
            try:
                select.select([self.rfd], [], [])
                chunk = os.read(self.rfd, 1 << 16)
            except OSError:
                return None
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            got = json.loads(line)
        except ValueError:
            return None
        return got if isinstance(got, dict) else None

    # The events the candidate's process may have logged, by request; any
    # other (a "slot", a "probe", a "done" of its own making) is refused: the
    # evidence of the audit is this process's to write.
    STAGES = ("import_candidate", "build_candidate", "align_state")
    ALLOWED = {"build": ("stage", "write_outside"), "weak": ("weak_start", "weak", "weak_done", "write_outside")}

    def _log_party_event(self, op, ev):
        name = str(ev.pop("event", ""))
        ev.pop("t", None)
        allowed = self.ALLOWED.get(op, ("write_outside",))
        if name not in allowed or (name == "stage" and ev.get("stage") not in self.STAGES):
            self.log.event("party_event_refused", name=name[:80], request=op)
            return
        if name == "write_outside":
            ev["party"] = "candidate"
        self.log.event(name, **ev)

    def request(self, op, **fields):
        """Sends a request and returns its answer; the events allowed before it are
        logged.  PartyGone when the process has ended or breaks the channel."""
        self.send(op, **fields)
        return self.answer(op)

    def send(self, op, **fields):
        """A request written to the process's channel, answered later (answer()):
        the pipe holds it until the process reads it, ready or not."""
        if self.gone:
            raise PartyGone(self.gone)
        data = (json.dumps({"op": op, **fields}) + "\n").encode()
        try:
            while data:
                data = data[os.write(self.wfd, data):]
        except OSError:
            self.gone = self._why("(it closed its channel)")
            raise PartyGone(self.gone)

    def answer(self, op):
        """The answer to the request op sent last, its allowed events logged."""
        if self.gone:
            raise PartyGone(self.gone)
        if not self.ready:
            self.wait_ready()
        while True:
            msg = self._line()
            if msg is None:
                time.sleep(0.05)
                self.gone = self._why("in the request '%s'" % op)
                raise PartyGone(self.gone)
            if msg.get("op") == "event" and isinstance(msg.get("event"), dict):
                self._log_party_event(op, dict(msg["event"]))
                continue
            if msg.get("op") == "answer":
                return msg
            self.gone = "the candidate's process sent something that is no answer to '%s'" % op
            raise PartyGone(self.gone)

    def hand(self, name, obj):
        """obj for the candidate's process to read: a token it loads it by
        (kaudit_party.load_handed).  A sealed memory file when the socket
        takes it now; else a file in a directory it may not write, from the
        first failure on (no memory for it, a process that closed its end or
        does not take what it was handed: its queue full)."""
        import torch   # imported by the runner long before any hand-off

        if self.fdsock is not None:
            try:
                return self._hand_memory(torch, name, obj)
            except OSError as exc:   # from now on through files: said once
                self.fdsock.close()
                self.fdsock = None
                if self.log is not None:
                    self.log.event("handoff", status="files", name=name, reason=str(exc)[:200])
        path = os.path.join(self.handoff, name)
        tmp = path + ".tmp"
        with writing_evidence("hand %s over" % path), self.guard.own():
            torch.save(obj, tmp)
            os.replace(tmp, path)
        return path

    def _hand_memory(self, torch, name, obj):
        """obj saved into a memory file, sealed (no write, no resize: what the
        candidate's process maps is what was saved), and its descriptor sent,
        never waiting: a process that does not take its descriptors fills its
        queue, and the hand-off goes through files (OSError)."""
        if unsent_bytes(self.fdsock) == 0:
            self.untaken = 0
        elif self.untaken >= MAX_UNTAKEN:
            raise OSError("%d memory files handed and not taken" % self.untaken)
        fd = os.memfd_create("kaudit-" + name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            crc = getattr(torch.serialization, "get_crc32_options", None)
            was = crc() if crc else None
            if crc:   # PyTorch 2.5 and later: no CRC over gigabytes, which the load does not check
                torch.serialization.set_crc32_options(False)
            try:
                with self.guard.own(), os.fdopen(os.dup(fd), "wb") as f:
                    torch.save(obj, f)
            finally:
                if crc:
                    torch.serialization.set_crc32_options(was)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, sum(getattr(fcntl, s) for s in SEALS))
            # sendmsg itself: socket.send_fds drops its flags (Python 3.11),
            # and a blocking send to a process that does not take its
            # descriptors waits for ever once its queue is full
            self.fdsock.sendmsg([name.encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))],
                               socket.MSG_DONTWAIT)
            self.untaken += 1
        finally:
            os.close(fd)
        return MEMORY_PREFIX + name

    def take(self, name, dest):
        """The file the candidate's process wrote in its directory, copied to dest:
        only a regular file with one link (never a link to a file it could not read).
        What it gave is its own answer (an OSError: its call's failure); dest is
        the runner's, made here and never over a file already there (a name of
        the runner's own files): failing that, EvidenceLost."""
        src = os.path.join(self.out, os.path.basename(str(name)))
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                # its own answer, not a lost process: the call's candidate-raised (an OSError)
                raise NotOwnFile("the candidate's process gave %s, which is not a regular file of its own" % name)
            with writing_evidence("copy the candidate's %s to %s" % (name, dest)), self.guard.own():
                with open(dest + ".tmp", "wb") as f:
                    while True:
                        chunk = os.read(fd, 1 << 20)
                        if not chunk:
                            break
                        f.write(chunk)
                os.link(dest + ".tmp", dest)   # EEXIST where dest is there already
                os.unlink(dest + ".tmp")
        finally:
            os.close(fd)
        try:
            with self.guard.own():
                os.unlink(src)
        except OSError:
            pass

    def close(self):
        if self.wfd < 0:
            return   # closed before: the numbers may name other files by now
        try:
            if not self.gone:
                os.write(self.wfd, b'{"op": "exit"}\n')
        except OSError:
            pass
        for fd in (self.wfd, self.rfd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.wfd = self.rfd = -1
        if self.fdsock is not None:
            self.fdsock.close()   # what the process never took goes with it
            self.fdsock = None
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.log is not None:
            self.log.event("party", status="ended", returncode=self.proc.returncode)
