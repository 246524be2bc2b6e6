"""kaudit_party.py - the candidate's process of `kaudit audit` (docs/audit.md,
"Two parties, two processes").

  kaudit confine --read ... --write ... --report-fd W -- python3 kaudit_party.py R W [S]

The runner (kaudit_runner.py, the reference's process) starts this process
under `kaudit confine`: a Landlock domain of its own that reads neither the
runner's event log, its plan, nor any tensor file, and writes only its own
directories; no_new_privs, no signal or ptrace out of it, a seccomp filter.
It imports the candidate, and nothing else of the audit: it never learns the
audit's seed (the runner hands it each call's inputs, drawn in the runner,
as a file in a directory it may only read, just before the call) nor which
elements of a large output are compared (the runner names the sample after
the call has returned).  It answers requests, one JSON object a line on
descriptor R, with one JSON object a line on descriptor W; before an answer
it may send events ({"op": "event", ...}) that the runner logs.  Its
outputs go to files in its own directory, which the runner copies into the
audit's tensors (docs/tensor-format.md, never pickle: the runner does not
unpickle what this process wrote).

Nothing here is trusted: the candidate shares this interpreter and can
change any of it.  What it could forge this way is its own answers, which
are what is judged; docs/threat-model.md lists what this process still
reports about itself (the inputs it changed, the aliasing of its outputs,
the probe's replays) and how each is checked from outside.
"""

import array
import json
import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kaudit_events  # noqa: E402,F401  (first: "t" counts torch's import)
import kaudit_tensors  # noqa: E402
import kaudit_probe  # noqa: E402  (before the candidate is imported)
import kaudit_weak  # noqa: E402  (snapshots the timing functions before the candidate exists)

import torch  # noqa: E402

from kaudit_events import StageFailed, short_error, stage  # noqa: E402
from kaudit_guard import WriteGuard  # noqa: E402
from kaudit_inputs import clone_tree, native_inputs, to_device  # noqa: E402,F401  (kaudit_weak's)
from kaudit_calls import (is_out_of_memory, is_refused_by_confinement, mutated, output_leaves,  # noqa: E402
                          overwritten, poison_like, sampled, snapshot, synchronize)
from kaudit_state import AlignmentError, align_state  # noqa: E402
from kaudit_flags import global_flags  # noqa: E402
from kaudit_marks import Marks, load_module, phase  # noqa: E402,F401  (phase: kaudit_weak's too)
from kaudit_timing import Timer, paired_batches  # noqa: E402
from kaudit_party_link import MEMORY_PREFIX  # noqa: E402  (the runner's end of the hand-off)

REF = "kaudit:reference"
CAND = "kaudit:candidate"


class Channel:
    """The requests (descriptor R) and the answers and events (descriptor W)."""

    def __init__(self, rfd, wfd):
        self.rfile = os.fdopen(rfd, "r", buffering=1)
        self.wfd = wfd

    def send(self, obj):
        data = (json.dumps(obj, allow_nan=False, default=str) + "\n").encode()
        while data:
            data = data[os.write(self.wfd, data):]

    def receive(self):
        line = self.rfile.readline()
        return json.loads(line) if line else None


class PartyLog:
    """The runner's Log as this process has it: each event goes over the channel."""

    def __init__(self, channel):
        self.channel = channel

    def event(self, event_name, **fields):
        self.channel.send({"op": "event", "event": {"event": event_name, **fields}})


class HandedFiles:
    """The sealed memory files the runner hands over socket S
    (kaudit_party_link.hand), kept by name until asked for: the runner sends
    each before the request that names it."""

    PREFIX = MEMORY_PREFIX

    def __init__(self, fd):
        self.sock = socket.socket(fileno=fd) if fd is not None else None
        self.kept = {}

    def _receive(self, flags):
        """(name, descriptors) of the next datagram: recvmsg itself, since
        socket.recv_fds drops its flags (Python 3.11)."""
        msg, ancdata, _, _ = self.sock.recvmsg(256, socket.CMSG_SPACE(4 * 4), flags | socket.MSG_CMSG_CLOEXEC)
        fds = array.array("i")
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        return msg, list(fds)

    def _keep(self, msg, fds):
        got = msg.decode(errors="replace")
        for extra in fds[1:]:
            os.close(extra)
        if fds:
            old = self.kept.pop(got, None)
            if old is not None:
                os.close(old)   # handed again: the older is no one's any more
            self.kept[got] = fds[0]

    def drain(self):
        """Every descriptor sent so far, taken without waiting and kept by
        name: a request that fails before it loads what it was handed (a
        fresh instance that does not build) leaves no memory file queued
        behind it, and the runner's sends never find the queue full."""
        while self.sock is not None:
            try:
                msg, fds = self._receive(socket.MSG_DONTWAIT)
            except OSError:   # nothing more (EAGAIN), or a closed socket: take() says so
                return
            if not msg and not fds:
                return
            self._keep(msg, fds)

    def take(self, name):
        """The descriptor of the newest memory file handed as name."""
        while name not in self.kept:
            if self.sock is None:
                raise OSError("no memory file handed as %r: no socket for them" % name)
            msg, fds = self._receive(0)
            if not msg and not fds:
                raise OSError("the runner's socket closed before %r came" % name)
            self._keep(msg, fds)
        return self.kept.pop(name)


HANDED = HandedFiles(None)


def _load(source, device, mmap=False):
    kw = {"map_location": device}
    if mmap:
        kw["mmap"] = True
    try:
        return torch.load(source, weights_only=False, **kw)
    except TypeError:
        if mmap:
            raise
        return torch.load(source, **kw)   # a torch without weights_only


def load_handed(token, device):
    """What the runner handed this process (torch.save, the runner's own): a
    sealed memory file (token memfd:NAME), mapped where PyTorch can (2.1 and
    later) and read otherwise; or a file in a directory this process may
    only read."""
    if not token.startswith(HandedFiles.PREFIX):
        return _load(token, device)
    fd = HANDED.take(token[len(HandedFiles.PREFIX):])
    try:
        try:
            return _load("/proc/self/fd/%d" % fd, device, mmap=True)
        except (TypeError, RuntimeError, OSError, ValueError):
            pass
        os.lseek(fd, 0, os.SEEK_SET)   # the runner's writes moved the shared offset
        with os.fdopen(os.dup(fd), "rb") as f:
            return _load(f, device)
    finally:
        os.close(fd)


class Handed:
    """Inputs handed over as a file, with the interface of kaudit_inputs.SlotInputs the probe uses."""

    def __init__(self, args):
        self.args = args

    def make(self, device, fp64=False):
        return self.args

    def drop(self):
        pass


class Party:
    def __init__(self, channel):
        self.ch = channel
        self.log = PartyLog(channel)
        self.preimport = kaudit_probe.Preimport()
        self.instances = {}
        self.buffers = None
        self.pending = []     # (leaves) of the last call, until "collect"
        self.kept = []        # a repeated slot's outputs, for "aliasing"
        self.mapping = {}     # reference state key -> instance A's (align_state)
        self.arms = {}
        self.arm_outputs = {}    # arm -> {"first": leaves, "last": leaves} of its timed calls

    # --- requests

    def op_build(self, q):
        # PyTorch's switches before any of the candidate's code ran ("flags")
        self.flags_before = global_flags()
        self.device = torch.device(q["device"])
        self.marks = Marks(self.device.type == "cuda")
        self.out = q["out_dir"]
        self.seed = int(q["build_seed"])
        self.plan = {"candidate": q["candidate"]}
        self.guard = WriteGuard(q.get("write_roots") or [os.getcwd()], self.log)
        self.guard.party = "candidate"
        sys.addaudithook(self.guard.hook)
        self.init_inputs = load_handed(q["init"], "cpu")
        self.ref_state = load_handed(q["state"], self.device)
        declared = q.get("candidate_only")
        self.candidate_only = frozenset(str(k) for k in declared) if isinstance(declared, list) else frozenset()
        preimport = self.preimport
        restore = preimport.install()   # torch._dynamo imported while the compilers run, if not yet
        try:
            with phase(self.marks, CAND):
                def load_candidate():
                    mod = load_module("kaudit_candidate", q["candidate"])
                    if not hasattr(mod, "ModelNew"):
                        raise AttributeError("the candidate defines no 'ModelNew'")
                    return mod
                self.cand_mod = stage(self.log, "import_candidate", load_candidate)
            self.instances["A"] = stage(self.log, "build_candidate", self.new_candidate)
        finally:
            preimport.uninstall(restore)
        # a build was expected (KAUDIT_PREIMPORT_AT=build) and none imported it: now,
        # while the runner computes the reference's slots (not after a failed
        # stage: no probe follows that); else done already, before ready
        self.preimported = preimport.finish()
        try:
            info, self.mapping = align_state(self.ref_state, self.instances["A"], self.candidate_only)
        except AlignmentError as exc:
            self.log.event("stage", stage="align_state", status="unresolved", code=exc.code, error=str(exc))
            raise StageFailed("align_state")
        self.log.event("stage", stage="align_state", status="ok", **info)
        self.cand = self.instances["A"]
        # every reference key whose value was cast (the event lists 64 at most): the
        # state check compares there after the same cast
        now = self.cand.state_dict()
        return {"casts": {a: str(now[b].dtype).replace("torch.", "") for a, b in self.mapping.items()
                          if now[b].dtype != self.ref_state[a].dtype},
                "reference_only": [a for a in self.ref_state if a not in self.mapping],
                "preimported": self.preimported}

    def new_candidate(self):
        torch.manual_seed(self.seed)
        with phase(self.marks, CAND):
            m = self.cand_mod.ModelNew(*clone_tree(self.init_inputs))
            m = m.to(self.device)
            m.eval()
        return m

    def call(self, model, args):
        with torch.no_grad():
            synchronize(self.device)
            with phase(self.marks, CAND):
                out = model(*args)
            synchronize(self.device)
        return out

    def op_call(self, q):
        """One call of an instance on the handed inputs (or, with refill, on the last
        call's buffers refilled with them)."""
        inst = q.get("instance", "A")
        if inst not in self.instances:
            try:
                m = self.new_candidate()
                align_state(self.ref_state, m, self.candidate_only)
            except Exception as exc:
                return {"status": "candidate-raised", "error": "building a fresh instance: " + short_error(exc)[0]}
            self.instances[inst] = m
        handed = load_handed(q["inputs"], self.device)
        if q.get("refill") and self.buffers is not None:
            for b, v in zip(self.buffers, handed):
                if isinstance(b, torch.Tensor):
                    b.copy_(v)
            args = self.buffers
        else:
            args = handed
        self.buffers = args
        if not q.get("keep"):
            self.kept = []
        self.pending = []
        before = snapshot(args)
        poison_like([(tuple(s), getattr(torch, d)) for s, d in q.get("poison", [])], self.device)
        if q.get("mark"):
            self.marks.mark(q["mark"])
        train = q.get("mode") == "train"
        try:
            if train:   # the train_mode slot: its mode and the reference's generator seed
                self.instances[inst].train()
                torch.manual_seed(int(q["rng_seed"]))
            out = self.call(self.instances[inst], args)
        except Exception as exc:
            status = "resource-exhausted" if is_out_of_memory(exc) else \
                "confinement-refused" if is_refused_by_confinement(exc) else "candidate-raised"
            err, tb = short_error(exc)
            return {"status": status, "error": err, "traceback": tb}
        finally:
            if train:
                self.instances[inst].eval()
        mut = mutated(args, before)
        leaves = output_leaves(out)
        leaves += [(f"input[{i}]", args[i]) for i in q.get("reference_mutates", [])]
        self.pending = leaves
        if q.get("keep"):
            self.kept.append((q.get("call", 0), out, [(p, v.detach().clone()) for p, v in output_leaves(out)
                                                      if isinstance(v, torch.Tensor)]))
        return {"status": "ok", "candidate_mutates": mut}

    def _write_sampled(self, q, leaves):
        """leaves sampled with the key the runner gives in q, written into this
        process's own directory under q's name (its base name only): the
        answer the runner takes the file by."""
        name = os.path.basename(q["name"])
        key = tuple(q["key"]) if isinstance(q["key"], list) else q["key"]
        kaudit_tensors.write_tensor_file(os.path.join(self.out, name), sampled(leaves, key))
        return {"file": name}

    def op_collect(self, q):
        """The last call's outputs, sampled as the runner says now that the call has returned."""
        answer = self._write_sampled(q, self.pending)
        self.pending = []
        return answer

    def op_reload(self, q):
        """A state handed by the runner loaded into instance A, as the first was
        (align_state: the verified mapping, values read back)."""
        try:
            align_state(load_handed(q["state"], self.device), self.cand, self.candidate_only)
        except AlignmentError as exc:
            return {"status": "candidate-raised", "error": "%s: %s" % (exc.code, exc)}
        except Exception as exc:
            return {"status": "candidate-raised", "error": short_error(exc)[0]}
        return {"status": "ok"}

    def op_flags(self, q):
        """PyTorch's process-wide switches before the candidate was imported and now."""
        return {"before": getattr(self, "flags_before", None), "after": global_flags()}

    def op_repeat(self, q):
        """Instance A called `times` more times on the last call's inputs,
        nothing collected (the long run's calls between compared ones)."""
        inst, args = self.instances.get("A"), self.buffers
        if inst is None or args is None:
            return {"status": "candidate-raised", "error": "no call to repeat"}
        self.kept = []
        try:
            for _ in range(int(q.get("times", 0))):
                self.call(inst, args)
        except Exception as exc:
            status = "resource-exhausted" if is_out_of_memory(exc) else \
                "confinement-refused" if is_refused_by_confinement(exc) else "candidate-raised"
            err, tb = short_error(exc)
            return {"status": status, "error": err, "traceback": tb}
        return {"status": "ok"}

    def op_state(self, q):
        """Instance A's state after its calls, under the reference's keys (the
        mapping align_state verified), written like a call's outputs: kaudit
        compares it with the reference's (a parameter the candidate changed in
        place is a FAIL)."""
        synchronize(self.device)
        now = self.cand.state_dict()
        # in the reference's dtypes (a cast from a narrower floating dtype is exact)
        leaves = [("state." + a, now[b].to(self.ref_state[a].dtype) if now[b].dtype != self.ref_state[a].dtype
                   else now[b]) for a, b in ((a, self.mapping[a]) for a in self.ref_state if a in self.mapping)]
        return self._write_sampled(q, leaves)

    def op_aliasing(self, q):
        synchronize(self.device)
        aliasing = overwritten(self.kept)
        self.kept = []
        return {"aliasing": aliasing}

    def op_time_calls(self, q):
        """One warm-up, then the timed calls the way KernelBench times them (kaudit_runner.time_calls)."""
        if self.device.type != "cuda":
            return {}
        args = load_handed(q["inputs"], self.device)
        model = self.cand
        with torch.no_grad():
            with phase(self.marks, CAND):
                model(*args)
            torch.cuda.synchronize()
            for _ in range(int(q.get("timed_calls", 5))):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                with phase(self.marks, CAND):
                    model(*args)
                end.record()
                end.synchronize()
                self.marks.mark(q["mark"] + " " + repr(start.elapsed_time(end)))
        return {}

    def _arm(self, inputs, guard, outputs):
        """() -> ms of one timed call on fresh clones of the handed inputs.
        The outputs of its first call (a copy, made after the call's timed
        span) and of its latest are kept in outputs, for the runner to
        compare (op_collect_timed): the timed calls are the candidate's
        calls too."""
        if not hasattr(self, "timer"):
            self.timer = Timer(self.device)
        base = load_handed(inputs, self.device)
        model = self.cand

        def one():
            args = clone_tree(base)
            got = []

            def call():
                with phase(self.marks, CAND):
                    got.append(model(*args))
            with torch.no_grad():
                ms = self.timer.time(call, guard)
                leaves = output_leaves(got[0]) if got else []
                if "first" not in outputs:
                    outputs["first"] = [(p, v.detach().clone() if isinstance(v, torch.Tensor) else v)
                                        for p, v in leaves]
                outputs["last"] = leaves
            return ms
        return one

    def op_arm(self, q):
        outputs = self.arm_outputs[q["arm"]] = {}
        self.arms[q["arm"]] = self._arm(q["inputs"], bool(q.get("guard")), outputs)
        return {"clock": self.timer.clock}

    def op_collect_timed(self, q):
        """The outputs of an arm's first or latest timed call, sampled as the
        runner says now, written like a call's (op_collect)."""
        leaves = self.arm_outputs.get(q["arm"], {}).get(q["which"])
        if leaves is None:
            raise LookupError("no timed call of the arm '%s'" % q["arm"])
        synchronize(self.device)
        return self._write_sampled(q, leaves)

    def op_time_one(self, q):
        ms = self.arms[q["arm"]]()
        # the first call's outputs are cloned after its stop event: done before the
        # answer, so nothing of this process runs on the device while the runner
        # times the reference's arm next (analyzer/reference_windows.c)
        synchronize(self.device)
        return {"ms": ms}

    def op_paired(self, q):
        """A paired check whose two arms are both this process's (the stream differential)."""
        with torch.no_grad():
            batches = paired_batches(self.arms[q["a"]], self.arms[q["b"]], tuple(q["orders"]))
        return {"batches": batches}

    def op_probe(self, q):
        handed = Handed(load_handed(q["inputs"], self.device))
        nonce = q["nonce"]

        class Shim:
            device = self.device
            marks = self.marks

            @staticmethod
            def probe_inputs(offset):
                return handed

        def call(args):
            return self.call(self.cand, args)

        def write(name, out):
            fname = "probe-%s.kt" % name.replace(":", "-")
            kaudit_tensors.write_tensor_file(os.path.join(self.out, fname),
                                             sampled(output_leaves(out), ("probe", nonce)))
            return fname

        def state_of():
            return {k: v.detach().clone() for k, v in self.cand.state_dict().items()}

        try:
            event = kaudit_probe.run_probe(Shim, q["spec"], call, write, state_of)
        except kaudit_probe.ProbeUnresolved as exc:
            event = {"status": "unresolved", "check": exc.check, "error": str(exc)}
            if exc.traceback:
                event["traceback"] = exc.traceback
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            event = {"status": "unresolved", "check": "probe-raised", "error": short_error(exc)[0]}
        return {"probe": event}

    def op_weak(self, q):
        """The weak surfaces (kaudit_weak.py): they imitate validators that run both
        parties in one process, so they run here, with the reference imported.
        Not when the candidate never imported: they would judge a module that
        does not exist (kaudit counts the surfaces as not evaluated)."""
        if getattr(self, "cand_mod", None) is None:
            return {"ok": False, "error": "the candidate was not imported"}
        self.ref_mod = load_module("kaudit_reference", q["reference"])
        self.native_device = self.device if q.get("native_on_device") else None
        self.plan = {"candidate": q["candidate"]}
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        kaudit_weak.Surfaces(self, q["names"], self.log, sys.modules[__name__]).run()
        return {}


def main(argv):
    global HANDED
    if len(argv) not in (3, 4):
        print("usage: kaudit_party.py REQUEST_FD ANSWER_FD [HANDOFF_SOCKET_FD]", file=sys.stderr)
        return 4
    ch = Channel(int(argv[1]), int(argv[2]))
    if len(argv) == 4:
        HANDED = HandedFiles(int(argv[3]))
    party = Party(ch)
    if os.environ.get("KAUDIT_PREIMPORT_AT") != "build":
        party.preimport.finish("before-ready")   # nothing to compile: beside the runner's start
    ch.send({"op": "ready", "pid": os.getpid(), "torch": torch.__version__})
    while True:
        q = ch.receive()
        if q is None or q.get("op") == "exit":
            return 0
        HANDED.drain()   # sent before the request
        handler = getattr(party, "op_" + str(q.get("op")), None)
        try:
            if handler is None:
                raise ValueError("unknown request %r" % q.get("op"))
            answer = handler(q)
            answer["ok"] = True
        except StageFailed as exc:
            answer = {"ok": False, "stage_failed": str(exc)}
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            err, tb = short_error(exc)
            answer = {"ok": False, "error": err, "traceback": tb}
        answer["op"] = "answer"
        ch.send(answer)


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
