#!/usr/bin/env python3
"""check_session.py - the GPU suite's assertions on one recorded session.

    check_session.py SCENARIO --dump DUMP.json --stderr PROGRAM_STDERR
                     [--profile PROFILE.json] [--script NAME]

SCENARIO is raw_cublas, side_stream, torch_ops, triton_add or fork_subprocess.
DUMP.json is `kaudit dump --json SESSION`; PROGRAM_STDERR is the stderr of the
program's run under `kaudit run`, where the program wrote what it did as
"KAUDIT_TEST ..." lines (launch counts, elapsed times, pids, shapes).

Prints one line per assertion, "PASS <scenario>: <what>" or
"FAIL <scenario>: <what> -- <why>", and "INFO ..." lines that are not
counted.  Exit status: 0 when nothing failed, 1 otherwise.

The dump's schema was agreed in prose and may shift a little: every key is
read through get(), and a missing key fails the assertion that needed it with
a message naming the key and the keys that were there.  Only the standard
library is used (this runs on the GPU machine's python3).
"""

import argparse
import collections
import ctypes
import ctypes.util
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys

# ---------------------------------------------------------------------------
# Reporting


class SchemaError(Exception):
    pass


class Report:
    def __init__(self, scenario):
        self.scenario = scenario
        self.passed = 0
        self.failed = 0

    def result(self, ok, what, detail=""):
        tag = "PASS" if ok else "FAIL"
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        line = f"{tag} {self.scenario}: {what}"
        if detail:
            line += " -- " + shorten(detail, 600)
        print(line, flush=True)

    def info(self, msg):
        print(f"INFO {self.scenario}: {shorten(msg, 1500)}", flush=True)

    def check(self, what, fn):
        """fn() returns (ok, detail) or ok; any exception is a failure that names it."""
        try:
            r = fn()
            ok, detail = (r if isinstance(r, tuple) else (bool(r), ""))
        except SchemaError as exc:
            ok, detail = False, f"dump schema: {exc}"
        except Exception as exc:  # a checker bug must not hide the other checks
            ok, detail = False, f"checker error: {type(exc).__name__}: {exc}"
        self.result(bool(ok), what, detail)
        return bool(ok)


def shorten(s, n):
    s = str(s).replace("\n", " | ")
    return s if len(s) <= n else s[: n - 3] + "..."


# ---------------------------------------------------------------------------
# Reading the dump defensively


def get(obj, key, where):
    if not isinstance(obj, dict):
        raise SchemaError(f"{where}: expected an object, found {type(obj).__name__}")
    if key not in obj:
        have = ", ".join(sorted(map(str, obj))[:30])
        raise SchemaError(f"{where}: key '{key}' missing (keys there: {have})")
    return obj[key]


def get_list(obj, key, where):
    v = get(obj, key, where)
    if not isinstance(v, list):
        raise SchemaError(f"{where}.{key}: expected a list, found {type(v).__name__}")
    return v


def as_int(v, where):
    """Integers may come as numbers or as "0x..." / decimal strings."""
    if v is None:
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        s = v.strip()
        if s in ("(nil)", "null", ""):
            return 0
        try:
            return int(s, 0)
        except ValueError:
            pass
    raise SchemaError(f"{where}: expected an integer, found {v!r}")


def origin_of(p):
    """'exec' or 'fork' (the format's enum values 1 and 2 are accepted too)."""
    o = p.get("origin", "exec")
    return {1: "exec", 2: "fork"}.get(o, str(o).lower()) if not isinstance(o, bool) else str(o)


def pname(p):
    try:
        argv = p.get("argv") or []
        return f"pid {p.get('pid')} ({' '.join(map(str, argv))[:80]})"
    except Exception:
        return "process ?"


def argv_of(p, where="process"):
    argv = get(p, "argv", where)
    if isinstance(argv, str):
        return argv.split("\0") if "\0" in argv else argv.split()
    if not isinstance(argv, list):
        raise SchemaError(f"{where}.argv: expected a list, found {type(argv).__name__}")
    return [str(a) for a in argv]


def kernels_of(p):
    return get_list(p, "kernels", pname(p))


def vendor_calls_of(p):
    return get_list(p, "vendor_calls", pname(p))


def kname(k):
    return str(get(k, "name", "kernel"))


def vendor_id(k):
    """The kernel's vendor_call_id (None when outside every vendor window)."""
    v = get(k, "vendor_call_id", f"kernel '{shorten(k.get('name'), 60)}'")
    if v in (None, 0, "", "null"):
        return None
    return as_int(v, "kernel.vendor_call_id")


def call_index(p):
    idx = {}
    for c in vendor_calls_of(p):
        idx[as_int(get(c, "call_id", "vendor_call"), "vendor_call.call_id")] = c
    return idx


def library_of(call):
    return str(get(call, "library", f"vendor_call {call.get('call_id')}")).lower()


def api_of(call):
    return str(get(call, "api", f"vendor_call {call.get('call_id')}"))


def op_of(call):
    """The operation summary dict, or None when the dump has none for this call."""
    op = call.get("op")
    return op if isinstance(op, dict) and op else None


def end_status(p):
    """(end kind, exit status): the trace's own end record first, else what the
    parent saw through wait() (a C program returning from main may leave the
    status unknown to the preload; its parent, kaudit or a traced program,
    still knows it)."""
    end = get(p, "end", pname(p))
    kind = status = None
    if isinstance(end, dict):
        kind, status = end.get("kind"), end.get("status")
    if status is None:
        seen = p.get("parent_saw")
        if isinstance(seen, dict):
            for key in ("exit_status", "status", "exit_code", "code"):
                if isinstance(seen.get(key), int):
                    status = seen[key]
                    break
            else:
                ws = seen.get("wait_status")
                if isinstance(ws, int) and (ws & 0x7F) == 0:
                    status = (ws >> 8) & 0xFF
    return kind, status


HEALTH_NAMES = {
    1: "preload_loaded", 2: "injection_called", 3: "cupti_library", 4: "cupti_not_found",
    5: "cupti_version", 6: "cupti_subscribe", 7: "cupti_enable_failed", 8: "cupti_dropped",
    9: "buffer_lost", 10: "symbol_unresolved", 11: "foreign_subscriber", 12: "cupti_clock",
    13: "digest_unavailable", 14: "duplicate_library", 15: "cupti_unsupported",
    16: "nvtx_injection", 17: "writer_full", 18: "cupti_flushed", 19: "callback_overridden",
}


def health_code(h):
    c = get(h, "code", "health")
    if isinstance(c, int):
        return HEALTH_NAMES.get(c, str(c))
    return str(c).lower()


# ---------------------------------------------------------------------------
# Kernel names


class Demangler:
    """__cxa_demangle from libstdc++ (what Kineto uses), else c++filt, else identity."""

    def __init__(self):
        self.cache = {}
        self.fn = None
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
            fn = lib.__cxa_demangle
            fn.restype = ctypes.c_void_p
            fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.POINTER(ctypes.c_int)]
            self.fn = fn
            self.free = ctypes.CDLL(None).free
            self.free.argtypes = [ctypes.c_void_p]
        except Exception:
            self.fn = None
        self.cxxfilt = shutil.which("c++filt")

    def __call__(self, name):
        if not name.startswith("_Z"):
            return name
        if name in self.cache:
            return self.cache[name]
        out = name
        if self.fn is not None:
            status = ctypes.c_int(-1)
            ptr = self.fn(name.encode(), None, None, ctypes.byref(status))
            if status.value == 0 and ptr:
                out = ctypes.string_at(ptr).decode(errors="replace")
                self.free(ptr)
        elif self.cxxfilt:
            try:
                out = subprocess.run([self.cxxfilt, name], capture_output=True, text=True,
                                     timeout=10).stdout.strip() or name
            except Exception:
                out = name
        self.cache[name] = out
        return out


demangle = Demangler()


def norm_name(name):
    return re.sub(r"\s+", " ", demangle(name)).strip()


def name_is(name, want):
    """Exact name, or the function `want` inside a mangled or demangled C++ name."""
    if name == want:
        return True
    if name.startswith("_Z") and f"{len(want)}{want}" in name:
        return True
    return re.search(r"(^|[\s:])" + re.escape(want) + r"(\(|<|$)", demangle(name)) is not None


def is_torch_native(name):
    d = demangle(name)
    return ("at::native::" in d or "at::cuda::" in d or "2at6native" in name
            or "at_cuda_detail" in d)


CUDNN_NAME = re.compile(r"cudnn|fprop|dgrad|wgrad|conv|nchw|nhwc|implicit_gemm|winograd", re.I)
GEMM_NAME = re.compile(r"nvjet|gemm|gemv|cutlass|splitK|xmma", re.I)


def kernel_class(name):
    d = demangle(name)
    if CUDNN_NAME.search(d):
        return "conv"
    if GEMM_NAME.search(d):
        return "gemm"
    return "other"


# ---------------------------------------------------------------------------
# Facts the program printed on stderr


def read_facts(path):
    facts = {"launches": {}, "vendor_calls": {}, "elapsed": [], "gemm": [], "conv": None,
             "pids": {}, "streams": {}, "events": {}, "inline_mode": None}
    if not path or not os.path.exists(path):
        return facts
    with open(path, errors="replace") as f:
        for line in f:
            if not line.startswith("KAUDIT_TEST "):
                continue
            w = line.split()[1:]
            if not w:
                continue
            key, rest = w[0], w[1:]
            if key == "launches" and len(rest) >= 2:
                facts["launches"][rest[0]] = int(rest[1])
            elif key == "vendor_calls" and len(rest) >= 2:
                facts["vendor_calls"][rest[0]] = int(rest[1])
            elif key == "elapsed_ms":
                label = None
                if rest and not re.match(r"^[-+0-9.]", rest[0]):
                    label, rest = rest[0], rest[1:]
                e = {"label": label, "ms": float(rest[0])}
                if len(rest) > 1 and rest[1].startswith(("0x", "-0x")):
                    e["ms"] = float.fromhex(rest[1])      # the exact float the program got
                for kv in rest[2:]:
                    if "=" in kv:
                        k, v = kv.split("=", 1)
                        e[k] = ptr_value(v)
                facts["elapsed"].append(e)
            elif key == "gemm" and len(rest) >= 4:
                facts["gemm"].append((rest[0], int(rest[1]), int(rest[2]), int(rest[3])))
            elif key == "conv" and len(rest) >= 7:
                facts["conv"] = dict(zip("n c k h w r s".split(), map(int, rest[:7])))
            elif key in ("parent_pid", "child_pid", "fork_pid") and rest:
                facts["pids"][key] = int(rest[0])
            elif key in ("stream", "event"):
                for kv in rest:
                    if "=" in kv:
                        k, v = kv.split("=", 1)
                        facts[key + "s"][k] = ptr_value(v)
            elif key == "inline_mode" and rest:
                facts["inline_mode"] = rest[0]
    return facts


def ptr_value(s):
    s = s.strip()
    if s in ("(nil)", "0", "(null)"):
        return 0
    try:
        return int(s, 16)
    except ValueError:
        return None


def f32(x):
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def same_ms(recorded, printed):
    """The elapsed value in the trace is the float the program got back."""
    if recorded is None:
        return False
    r = float(recorded)
    if math.isnan(r) or math.isnan(printed):
        return False
    if f32(r) == f32(printed):
        return True
    return abs(r - printed) <= 1e-6 * max(abs(printed), 1e-3)


# ---------------------------------------------------------------------------
# Timing calls


def timing_kind(tc):
    t = (str(tc.get("api", "")) + " " + str(tc.get("name", ""))).lower().replace("_", "")
    for kind, pats in (("elapsed", ("elapsed",)),
                       ("record", ("eventrecord",)),
                       ("wait", ("streamwaitevent", "waitevent")),
                       ("stream_sync", ("streamsynchronize",)),
                       ("event_sync", ("eventsynchronize",)),
                       ("device_sync", ("devicesynchronize", "ctxsynchronize")),
                       ("stream_create", ("streamcreate",)),
                       ("event_create", ("eventcreate",)),
                       ("event_destroy", ("eventdestroy",)),
                       ("stream_destroy", ("streamdestroy",))):
        if any(p in t for p in pats):
            return kind
    return "other"


LEGACY_STREAMS = (0, 1, 2)   # NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD


# ---------------------------------------------------------------------------
# Checks every scenario shares


def find_processes(dump, rep):
    procs = get_list(dump, "processes", "dump")
    if dump.get("format") != "kaudit-dump":
        rep.info(f"dump format is {dump.get('format')!r}, expected 'kaudit-dump'")
    rep.info(f"dump version {dump.get('version')!r}; {len(procs)} process trace(s): "
             + "; ".join(f"{pname(p)} origin={p.get('origin')} kernels={len(p.get('kernels') or [])}"
                         for p in procs[:12]))
    return procs


def main_process(procs, script):
    """The traced program itself: origin exec, argv naming the script or binary."""
    cands = []
    for p in procs:
        argv = argv_of(p, pname(p))
        if origin_of(p) != "exec":
            continue
        if any(os.path.basename(a) == script or a.endswith("/" + script) or a == script
               for a in argv):
            cands.append(p)
    if not cands:
        raise SchemaError(f"no exec-origin process whose argv names '{script}' "
                          f"(argv seen: {[argv_of(p)[:3] for p in procs][:10]})")
    return max(cands, key=final_image_key)


def final_image_key(p):
    """Prefer the image that did not exec another one (a wrapper script or shim
    may exec the real program under the same argv), then the one with most kernels."""
    end = p.get("end")
    replaced = isinstance(end, dict) and str(end.get("kind")) == "exec"
    return (not replaced, len(p.get("kernels") or []))


def common_checks(rep, procs, main, allow_incomplete_pids=()):
    def readable():
        bad = [f"{pname(p)}: {p.get('read_error')}" for p in procs if p.get("read_error")]
        bad += [f"{u.get('file')}: {u.get('error')}" for u in (rep.dump.get("unreadable") or [])
                if isinstance(u, dict)]
        return not bad, "; ".join(bad[:5])
    rep.check("every trace reads back without error (no read_error, nothing unreadable)", readable)

    def cupti_found():
        hs = get_list(main, "health", pname(main))
        codes = [health_code(h) for h in hs]
        used = [h.get("detail") for h in hs if health_code(h) == "cupti_library"]
        missing = [h.get("detail") for h in hs if health_code(h) == "cupti_not_found"]
        return not missing, (f"libcupti used: {used}" if not missing else
                             f"cupti_not_found: {missing}; the suite can export KAUDIT_CUPTI_LIB "
                             f"(KAUDIT_GPU_CUPTI_HINT=1); health codes seen: {sorted(set(codes))}")
    rep.check("CUPTI was found in the program", cupti_found)

    rep.check("the program's trace is complete and ended with exit status 0",
              lambda: (end_status(main)[1] == 0 and get(main, "complete", pname(main)) is True,
                       f"end={get(main, 'end', pname(main))!r} "
                       f"parent_saw={main.get('parent_saw')!r} complete={main.get('complete')!r}"))

    def all_complete():
        # Issue 2 lets a process that leaves through _exit/abort/a signal have a
        # truncated trace (that says so), so helper processes without GPU work
        # (compilers, ninja) may be incomplete: reported, not failed.  Every
        # trace that recorded kernels must be complete.
        bad, helpers = [], []
        for p in procs:
            if get(p, "complete", pname(p)) is True or p.get("pid") in allow_incomplete_pids:
                continue
            (bad if p is main or kernels_of(p) else helpers).append(pname(p))
        if helpers:
            rep.info(f"incomplete traces of processes without GPU work: {helpers[:8]}")
        return not bad, f"incomplete: {bad}" if bad else f"{len(procs)} traces"
    rep.check("every trace that recorded GPU work is complete (has its end record)", all_complete)

    def health_ok():
        bad = []
        for p in procs:
            for h in get_list(p, "health", pname(p)):
                code = health_code(h)
                value = h.get("value")
                try:
                    value = as_int(value, "health.value")
                except SchemaError:
                    pass
                if code in ("cupti_dropped", "buffer_lost", "writer_full") and value not in (0, None):
                    bad.append(f"{pname(p)}: {code}={value} {h.get('detail') or ''}")
        return not bad, "; ".join(bad)
    rep.check("health: no dropped CUPTI records, lost buffers or writer overflow", health_ok)

    def main_health_info():
        seen = collections.OrderedDict()
        for h in get_list(main, "health", pname(main)):
            code = health_code(h)
            if code in ("cupti_library", "cupti_version", "cupti_subscribe", "cupti_not_found",
                        "symbol_unresolved", "foreign_subscriber", "cupti_enable_failed",
                        "cupti_clock", "digest_unavailable", "callback_overridden"):
                seen.setdefault(code, []).append(f"{h.get('value')!r}:{h.get('detail') or ''}")
        rep.info("main process health: " + "; ".join(f"{k}={v[:3]}" for k, v in seen.items()))
        return True
    try:
        main_health_info()
    except Exception as exc:
        rep.info(f"health not readable: {exc}")

    def counts_consistent():
        problems = []
        for p in procs:
            ks = kernels_of(p)
            counts = p.get("counts")
            if isinstance(counts, dict):
                if "kernels" in counts and as_int(counts["kernels"], "counts.kernels") != len(ks):
                    problems.append(f"{pname(p)}: counts.kernels={counts['kernels']} "
                                    f"but {len(ks)} kernel entries")
                if "kernels_in_vendor_window" in counts:
                    inwin = sum(1 for k in ks if vendor_id(k) is not None)
                    if as_int(counts["kernels_in_vendor_window"], "counts") != inwin:
                        problems.append(f"{pname(p)}: counts.kernels_in_vendor_window="
                                        f"{counts['kernels_in_vendor_window']} but {inwin} kernels "
                                        "carry a vendor_call_id")
            calls = call_index(p) if ks else {}
            for k in ks:
                vid = vendor_id(k)
                if vid is None:
                    continue
                call = calls.get(vid)
                if call is None:
                    problems.append(f"{pname(p)}: kernel '{shorten(kname(k), 60)}' names "
                                    f"vendor call {vid}, which is not in vendor_calls")
                    continue
                ids = call.get("kernel_correlation_ids")
                if isinstance(ids, list):
                    corr = as_int(get(k, "correlation_id", "kernel"), "kernel.correlation_id")
                    if corr not in [as_int(i, "kernel_correlation_ids") for i in ids]:
                        problems.append(f"{pname(p)}: kernel correlation {corr} not in "
                                        f"kernel_correlation_ids of vendor call {vid}")
        return not problems, "; ".join(problems[:5])
    rep.check("counts, vendor_call_id and kernel_correlation_ids agree with each other",
              counts_consistent)


def kernel_table(rep, p, limit=40):
    calls = {}
    try:
        calls = call_index(p)
    except Exception:
        pass
    rows = collections.Counter()
    for k in kernels_of(p):
        vid = vendor_id(k)
        lib = "-"
        if vid is not None:
            c = calls.get(vid, {})
            lib = f"{c.get('library', '?')}:{c.get('api', '?')}"
        rows[(shorten(norm_name(kname(k)), 90), lib)] += 1
    for (name, lib), n in sorted(rows.items(), key=lambda x: -x[1])[:limit]:
        rep.info(f"kernel x{n} [{lib}] {name}")


def count_named(kernels, want):
    return [k for k in kernels if name_is(kname(k), want)]


def launch_count_checks(rep, kernels, launches):
    for want, n in sorted(launches.items()):
        rep.check(f"kernel '{want}' recorded {n} time(s), as launched",
                  lambda want=want, n=n: (lambda got: (got == n, f"recorded {got}"))(
                      len(count_named(kernels, want))))


# ---------------------------------------------------------------------------
# Scenario (a): raw nvcc program with cuBLAS


def check_raw_cublas(rep, dump, facts, args):
    procs = find_processes(dump, rep)
    main = main_process(procs, args.script or "raw_cublas")
    common_checks(rep, procs, main)
    ks = kernels_of(main)
    kernel_table(rep, main)
    launches = facts["launches"]
    rep.check("the program reported its launch counts on stderr",
              lambda: (len(launches) >= 4, f"launch facts: {launches}"))
    launch_count_checks(rep, ks, launches)

    own = [k for k in ks if any(name_is(kname(k), w) for w in launches)]
    own_ids = {id(k) for k in own}
    custom = "sm80_xmma_gemm_f32f32_like_custom"
    rep.check(f"the vendor-named custom kernel '{custom}' carries no vendor_call_id",
              lambda: (lambda c: (bool(c) and all(vendor_id(k) is None for k in c),
                                  f"{len(c)} records, vendor ids "
                                  f"{[vendor_id(k) for k in c]}"))(count_named(ks, custom)))
    rep.check("none of the program's own kernels carries a vendor_call_id",
              lambda: (lambda bad: (not bad, f"in a vendor window: {bad}"))(
                  [kname(k) for k in own if vendor_id(k) is not None]))

    calls = call_index(main)
    sgemm_calls = [c for c in calls.values() if api_of(c) == "cublasSgemm_v2"]
    want_calls = facts["vendor_calls"].get("cublasSgemm_v2", 2)
    rep.check(f"{want_calls} cublasSgemm_v2 vendor calls recorded, library cublas",
              lambda: (len(sgemm_calls) == want_calls
                       and all(library_of(c) == "cublas" for c in sgemm_calls),
                       f"found {len(sgemm_calls)}: "
                       f"{[(c.get('call_id'), c.get('library'), c.get('depth')) for c in sgemm_calls]}; "
                       f"all apis: {sorted(collections.Counter(api_of(c) for c in calls.values()).items())}"))

    def sgemm_ops():
        bad = []
        for c in sgemm_calls:
            op = op_of(c)
            if op is None:
                bad.append(f"call {c.get('call_id')}: no op summary")
                continue
            mnk = tuple(as_int(get(op, x, "op"), "op." + x) for x in ("m", "n", "k"))
            if mnk != (512, 512, 512):
                bad.append(f"call {c.get('call_id')}: m,n,k={mnk}")
        return bool(sgemm_calls) and not bad, "; ".join(bad)
    rep.check("each cublasSgemm_v2 call's op summary says m=n=k=512", sgemm_ops)

    vendor_ks = [k for k in ks if id(k) not in own_ids]

    def vendor_kernels_in_window():
        if not vendor_ks:
            return False, "no kernel other than the program's own was recorded (cuBLAS's missing)"
        bad = []
        for k in vendor_ks:
            vid = vendor_id(k)
            c = calls.get(vid) if vid is not None else None
            if c is None or api_of(c) != "cublasSgemm_v2":
                bad.append(f"{shorten(kname(k), 70)} -> "
                           f"{None if c is None else api_of(c)} (vendor_call_id={vid})")
        return not bad, f"{len(vendor_ks)} cuBLAS kernels; outside an Sgemm window: {bad}"
    rep.check("every cuBLAS kernel carries a vendor_call_id whose api is cublasSgemm_v2",
              vendor_kernels_in_window)

    def each_call_has_kernels():
        per = collections.Counter(vendor_id(k) for k in vendor_ks)
        empty = [c.get("call_id") for c in sgemm_calls
                 if per[as_int(c.get("call_id"), "call_id")] == 0]
        return bool(sgemm_calls) and not empty, f"calls with no kernel: {empty}"
    rep.check("each cublasSgemm_v2 call launched at least one kernel in its window",
              each_call_has_kernels)

    def sgemm_streams_differ():
        streams = collections.defaultdict(set)
        for k in vendor_ks:
            streams[vendor_id(k)].add(as_int(get(k, "stream_id", "kernel"), "stream_id"))
        sets = [frozenset(s) for s in streams.values()]
        return len(sets) == 2 and not (sets[0] & sets[1]), f"streams per call: {dict(streams)}"
    rep.check("the two Sgemm calls ran on different streams (default, then side stream)",
              sgemm_streams_differ)

    timing_checks(rep, main, facts)


# ---------------------------------------------------------------------------
# Timing calls (scenarios a and d)


def timing_checks(rep, main, facts, expect_side=False):
    tcs = get_list(main, "timing_calls", pname(main))
    kinds = collections.Counter(timing_kind(tc) for tc in tcs)
    rep.info(f"timing calls by kind: {dict(kinds)}")
    elapsed = [tc for tc in tcs if timing_kind(tc) == "elapsed"]
    records = [tc for tc in tcs if timing_kind(tc) == "record"]

    for e in facts["elapsed"]:
        label = e.get("label") or "elapsed"

        def match(e=e):
            hits = [tc for tc in elapsed if same_ms(tc.get("elapsed_ms"), e["ms"])]
            return bool(hits), (f"program got {e['ms']!r} ms; trace has "
                                f"{[tc.get('elapsed_ms') for tc in elapsed][:8]}")
        rep.check(f"elapsed-time call '{label}' is in the trace with the value the program got",
                  match)

        if e.get("start") is not None and e.get("stop") is not None:
            def events(e=e):
                hits = [tc for tc in elapsed if same_ms(tc.get("elapsed_ms"), e["ms"])]
                pairs = [(as_int(tc.get("event"), "event"), as_int(tc.get("event2"), "event2"))
                         for tc in hits]
                return (e["start"], e["stop"]) in pairs, (
                    f"program: start={e['start']:#x} stop={e['stop']:#x}; "
                    f"trace: {[(hex(a or 0), hex(b or 0)) for a, b in pairs]}")
            rep.check(f"elapsed-time call '{label}' names the program's start and stop events",
                      events)

            def record_stream(e=e):
                want = e.get("stream")
                recs = [tc for tc in records if as_int(tc.get("event"), "event") == e["start"]]
                if not recs:
                    return False, f"no event record call for event {e['start']:#x}"
                if want is None:
                    return True, ""
                got = {as_int(tc.get("stream"), "stream") for tc in recs}
                ok = want in got or (want in LEGACY_STREAMS and got & set(LEGACY_STREAMS))
                return ok, f"program stream {want:#x}, trace streams {[hex(g or 0) for g in got]}"
            rep.check(f"the start event of '{label}' was recorded, on the program's stream",
                      record_stream)

    if expect_side:
        for kind, least in (("record", 5), ("wait", 1), ("stream_sync", 1), ("event_sync", 1),
                            ("device_sync", 1), ("stream_create", 1), ("event_create", 5)):
            rep.check(f"timing calls: at least {least} '{kind}'",
                      lambda kind=kind, least=least: (kinds[kind] >= least,
                                                      f"found {kinds[kind]}"))
        joined = facts["events"].get("joined")
        if joined is not None:
            def wait_on_joined():
                waits = [tc for tc in tcs if timing_kind(tc) == "wait"]
                got = [(as_int(tc.get("event"), "event"), as_int(tc.get("stream"), "stream"))
                       for tc in waits]
                ok = any(ev == joined and st in LEGACY_STREAMS for ev, st in got)
                return ok, (f"want event {joined:#x} on the default stream; trace: "
                            f"{[(hex(a or 0), hex(b or 0)) for a, b in got]}")
            rep.check("the default stream's wait names the side stream's 'joined' event",
                      wait_on_joined)

        def record_stream_ids():
            # Without CUDA_EVENT activity (the default) the analyzer places event
            # records on streams by the CUPTI stream id each record call carries:
            # it must be one of the ids the kernel records use.
            kernel_streams = {as_int(get(k, "stream_id", "kernel"), "stream_id")
                              for k in kernels_of(main)}
            recs = [tc for tc in tcs if timing_kind(tc) == "record" and tc.get("status") == 0]
            # A session recorded with exact event times (KAUDIT_EXACT_EVENT_TIMES=1, or
            # before the record calls carried stream ids) has them in its CUDA_EVENT records.
            by_corr = {as_int(e.get("correlation_id"), "correlation_id"): e.get("stream_id")
                       for e in (main.get("cuda_events") or [])}
            ids = [tc.get("stream_id") if tc.get("stream_id") is not None
                   else by_corr.get(as_int(tc.get("correlation_id"), "correlation_id")) for tc in recs]
            ok = bool(recs) and all(i is not None and i in kernel_streams for i in ids)
            return ok, f"event records' stream ids {sorted(set(map(str, ids)))}, kernel streams {sorted(kernel_streams)}"
        rep.check("every event record carries a CUPTI stream id that kernels use", record_stream_ids)


# ---------------------------------------------------------------------------
# Scenario (d): side stream


def check_side_stream(rep, dump, facts, args):
    procs = find_processes(dump, rep)
    main = main_process(procs, args.script or "side_stream")
    common_checks(rep, procs, main)
    ks = kernels_of(main)
    kernel_table(rep, main)
    launch_count_checks(rep, ks, facts["launches"])

    def streams_differ():
        side = {as_int(get(k, "stream_id", "kernel"), "stream_id")
                for k in count_named(ks, "kaudit_side_work")}
        mainst = {as_int(get(k, "stream_id", "kernel"), "stream_id")
                  for k in count_named(ks, "kaudit_main_work") + count_named(ks, "kaudit_combine")}
        ok = len(side) == 1 and len(mainst) == 1 and not (side & mainst)
        return ok, f"side-stream kernels on {sorted(side)}, default-stream kernels on {sorted(mainst)}"
    rep.check("side-stream kernels have one stream id, default-stream kernels another", streams_differ)

    def combine_after_side():
        side = count_named(ks, "kaudit_side_work")
        comb = count_named(ks, "kaudit_combine")
        if not side or not comb:
            return False, "kernels missing"
        last_end = max(as_int(get(k, "end_ns", "kernel"), "end_ns") for k in side)
        start = as_int(get(comb[0], "start_ns", "kernel"), "start_ns")
        return start >= last_end, f"combine starts {start - last_end} ns after the last side kernel ends"
    rep.check("GPU timestamps: the combine kernel starts after the side stream's work ended "
              "(it waited on the event)", combine_after_side)

    rep.check("no kernel carries a vendor_call_id and no vendor call was recorded",
              lambda: (lambda bad, calls: (not bad and not calls,
                                           f"in vendor windows: {bad}; vendor calls: {len(calls)}"))(
                  [kname(k) for k in ks if vendor_id(k) is not None], vendor_calls_of(main)))
    timing_checks(rep, main, facts, expect_side=True)


# ---------------------------------------------------------------------------
# Scenario (b): PyTorch


def gemm_matches(op, shapes):
    """cuBLAS is column-major: torch's [M,K]@[K,N] arrives as m=N, n=M (or transposed)."""
    m = as_int(get(op, "m", "op"), "op.m")
    n = as_int(get(op, "n", "op"), "op.n")
    k = as_int(get(op, "k", "op"), "op.k")
    for label, M, K, N in shapes:
        if k == K and {m, n} == {M, N}:
            return label
    return None


def check_torch_ops(rep, dump, facts, args):
    procs = find_processes(dump, rep)
    main = main_process(procs, args.script or "torch_ops.py")
    common_checks(rep, procs, main)
    ks = kernels_of(main)
    calls = call_index(main)
    kernel_table(rep, main)
    rep.check("the workload's kernels were recorded", lambda: (len(ks) > 0, f"{len(ks)} kernels"))

    # --- every kernel the profiler saw, the trace has, name by name ---------
    def same_as_profiler():
        if not args.profile or not os.path.exists(args.profile):
            return False, "no torch.profiler result to compare with (profile run failed?)"
        with open(args.profile) as f:
            prof = json.load(f)
        ref = prof.get("chrome_kernel_counts")
        source = "chrome trace"
        if not ref:
            ev = prof.get("events_cuda_counts") or {}
            ref = {n: c for n, c in ev.items() if not n.startswith(("Memcpy", "Memset"))}
            source = "prof.events()"
        if not ref:
            return False, f"the profiler result has no kernel counts (errors: {prof.get('errors')})"
        want = collections.Counter()
        for n, c in ref.items():
            want[norm_name(n)] += int(c)
        got = collections.Counter(norm_name(kname(k)) for k in ks)
        if got == want:
            return True, f"{sum(got.values())} kernels, {len(got)} names, same as {source}"
        only_got = {n: c for n, c in got.items() if want.get(n) != c}
        only_want = {n: c for n, c in want.items() if got.get(n) != c}
        total_ok = sum(got.values()) == sum(want.values())
        spelled = (total_ok and sorted(only_got.values()) == sorted(only_want.values())
                   and not (set(only_got) & set(only_want)))
        diff = (f"trace total {sum(got.values())}, {source} total {sum(want.values())}; "
                f"trace only/different: {dict(list(only_got.items())[:6])}; "
                f"profiler only/different: {dict(list(only_want.items())[:6])}")
        if spelled:
            rep.info("kernel names differ only in spelling between trace and profiler: " + diff)
            return True, "same counts; some names spelled differently (see INFO)"
        return False, diff
    rep.check("every kernel torch.profiler saw (separate run) is in the trace, "
              "same count per name", same_as_profiler)

    inline_n = facts["launches"].get("kaudit_inline_scale_kernel", 0)
    inline_ks = count_named(ks, "kaudit_inline_scale_kernel")
    native = [k for k in ks if is_torch_native(kname(k))]
    skip = {id(k) for k in native} | {id(k) for k in inline_ks}
    rest = [k for k in ks if id(k) not in skip]

    if inline_n:
        rep.check(f"load_inline kernel recorded {inline_n} times, outside vendor windows",
                  lambda: (len(inline_ks) == inline_n and all(vendor_id(k) is None for k in inline_ks),
                           f"recorded {len(inline_ks)}, vendor ids {[vendor_id(k) for k in inline_ks]}"))
    else:
        rep.info("load_inline part skipped (KAUDIT_GPU_SKIP_INLINE=1)")

    rep.check("at::native kernels are recorded and sit outside vendor windows",
              lambda: (bool(native) and all(vendor_id(k) is None for k in native),
                       f"{len(native)} at::native kernels; in a window: "
                       f"{[shorten(norm_name(kname(k)), 60) for k in native if vendor_id(k) is not None][:5]}"))

    rep.check("every other kernel (cuBLAS, cuBLASLt, cuDNN) sits in a vendor window",
              lambda: (lambda bad: (bool(rest) and not bad,
                                    f"{len(rest)} vendor kernels; outside any window: {bad[:6]}"))(
                  [shorten(norm_name(kname(k)), 80) for k in rest if vendor_id(k) is None]))

    gemm_ks = [k for k in rest if kernel_class(kname(k)) == "gemm"]
    conv_ks = [k for k in rest if kernel_class(kname(k)) == "conv"]

    def gemm_in_blas():
        # cuDNN runs convolutions as implicit GEMMs, so a GEMM-named kernel in
        # a cudnn window is fine; one in no window, or none in a BLAS window, is not.
        if not gemm_ks:
            return False, "no nvjet/xmma/gemm kernel recorded"
        bad, in_blas = [], 0
        for k in gemm_ks:
            c = calls.get(vendor_id(k))
            lib = None if c is None else library_of(c)
            if lib in ("cublas", "cublaslt"):
                in_blas += 1
            elif lib != "cudnn":
                bad.append(f"{shorten(kname(k), 60)} -> {lib}")
        names = sorted({shorten(kname(k), 50) for k in gemm_ks})
        return in_blas > 0 and not bad, (f"{in_blas} GEMM kernels in cublas/cublasLt windows "
                                         f"{names[:4]}; in no such window: {bad[:4]}")
    rep.check("GEMM kernels (nvjet/xmma/gemm) sit in cublas or cublasLt windows", gemm_in_blas)

    shapes = [(label, M, K, N) for (label, M, K, N) in facts["gemm"]]
    gemm_calls = {}
    for k in gemm_ks:
        vid = vendor_id(k)
        if vid in calls and library_of(calls[vid]) in ("cublas", "cublaslt"):
            gemm_calls[vid] = calls[vid]

    def gemm_shapes():
        if not shapes:
            return False, "the script printed no GEMM shapes"
        bad, found = [], collections.Counter()
        for vid, c in gemm_calls.items():
            # An inner call (depth > 1: a library calling another, e.g. cuDNN
            # using cuBLASLt) may do work of its own shape; only outermost
            # calls must match the script's matmuls.
            nested = as_int(c.get("depth", 1) or 1, "depth") > 1
            op = op_of(c)
            if op is None:
                if not nested:
                    bad.append(f"call {vid} ({api_of(c)}): no op summary")
                continue
            label = gemm_matches(op, shapes)
            if label is not None:
                found[label] += 1
            elif nested:
                rep.info(f"nested call {vid} ({api_of(c)}, depth {c.get('depth')}) "
                         f"m,n,k={op.get('m')},{op.get('n')},{op.get('k')}")
            else:
                bad.append(f"call {vid} ({api_of(c)}): m,n,k={op.get('m')},{op.get('n')},{op.get('k')}")
        missing = [s[0] for s in shapes if not found[s[0]]]
        return not bad and not missing, (f"matched {dict(found)}; missing {missing}; "
                                         f"implausible {bad[:4]}")
    rep.check("the GEMM windows' m,n,k match the script's matmuls (fp32 and bf16)", gemm_shapes)

    def conv_in_cudnn():
        cudnn_ks = [k for k in rest if vendor_id(k) in calls
                    and library_of(calls[vendor_id(k)]) == "cudnn"]
        bad = []
        for k in conv_ks:
            c = calls.get(vendor_id(k))
            if c is None or library_of(c) != "cudnn":
                bad.append(f"{shorten(kname(k), 60)} -> {None if c is None else library_of(c)}")
        apis = sorted({api_of(calls[vendor_id(k)]) for k in cudnn_ks})
        return bool(cudnn_ks) and not bad, (f"{len(cudnn_ks)} kernels in cudnn windows {apis}; "
                                            f"conv-named kernels elsewhere: {bad[:4]}")
    rep.check("convolution kernels sit in cudnn windows", conv_in_cudnn)

    def conv_shape():
        conv = facts["conv"]
        cudnn_calls = {vendor_id(k): calls[vendor_id(k)] for k in rest
                       if vendor_id(k) in calls and library_of(calls[vendor_id(k)]) == "cudnn"}
        ops = [op_of(c) for c in cudnn_calls.values() if op_of(c)]
        if not ops:
            rep.info("no op summary on the cudnn calls that launched kernels: "
                     f"{[api_of(c) for c in cudnn_calls.values()]}")
            return True, "no op summary to check"
        bad = []
        for op in ops:
            for key in ("n", "c", "k"):
                if key in op and conv and as_int(op[key], "op." + key) != conv[key]:
                    bad.append(f"{key}={op[key]} (script: {conv[key]})")
        rep.info(f"cudnn op summaries: {ops[:2]}")
        return not bad, "; ".join(bad)
    rep.check("the cudnn call's op summary (where present) has the script's n, c, k", conv_shape)


# ---------------------------------------------------------------------------
# Scenario (c): Triton


def check_triton_add(rep, dump, facts, args):
    procs = find_processes(dump, rep)
    main = main_process(procs, args.script or "triton_add.py")
    common_checks(rep, procs, main)
    ks = kernels_of(main)
    kernel_table(rep, main)
    want = facts["launches"].get("kaudit_add_kernel", 3)

    def triton_kernels():
        tk = [k for k in ks if kname(k) == "kaudit_add_kernel"
              or kname(k).startswith("kaudit_add_kernel_") or name_is(kname(k), "kaudit_add_kernel")]
        return tk
    rep.check(f"Triton kernel 'kaudit_add_kernel' recorded {want} times under its Triton name",
              lambda: (lambda tk: (len(tk) == want, f"recorded {len(tk)}: "
                                   f"{sorted({kname(k) for k in tk})}"))(triton_kernels()))
    rep.check("the Triton kernel sits outside vendor windows",
              lambda: (lambda tk: (bool(tk) and all(vendor_id(k) is None for k in tk),
                                   f"vendor ids {[vendor_id(k) for k in tk]}"))(triton_kernels()))

    def ptxas_traced():
        names = [os.path.basename(argv_of(p)[0]) if argv_of(p) else "?" for p in procs]
        return any("ptxas" in n for n in names), f"processes: {sorted(set(names))[:15]}"
    rep.check("Triton's ptxas child process was traced (compiler children are evidence)",
              ptxas_traced)


# ---------------------------------------------------------------------------
# Scenario (e): subprocess with a scrubbed environment, and fork


def check_fork_subprocess(rep, dump, facts, args):
    procs = find_processes(dump, rep)
    pids = facts["pids"]
    by_pid = collections.defaultdict(list)
    for p in procs:
        by_pid[as_int(get(p, "pid", "process"), "pid")].append(p)
    parent_pid, child_pid, fork_pid = (pids.get("parent_pid"), pids.get("child_pid"),
                                       pids.get("fork_pid"))
    rep.check("the script reported parent, child and fork pids",
              lambda: (None not in (parent_pid, child_pid, fork_pid), f"{pids}"))

    def exec_trace(pid):
        ps = [p for p in by_pid.get(pid, []) if origin_of(p) == "exec"]
        return max(ps, key=final_image_key) if ps else None

    parent = exec_trace(parent_pid)
    if parent is None:
        parent = main_process(procs, args.script or "fork_subprocess.py")
    common_checks(rep, procs, parent, allow_incomplete_pids=(fork_pid,))
    rep.check("the parent's kernels were recorded",
              lambda: (len(kernels_of(parent)) > 0, f"{len(kernels_of(parent))} kernels"))

    child = exec_trace(child_pid)
    rep.check("the scrubbed-environment child has a trace of its own",
              lambda: (child is not None,
                       f"exec-origin trace with pid {child_pid}: "
                       f"{'found' if child is not None else 'none'}; {len(by_pid)} pids traced: "
                       f"{sorted(by_pid)[:20]}"))
    if child is not None:
        rep.check("the child's parent is the script",
                  lambda: (as_int(get(child, "ppid", pname(child)), "ppid") == parent_pid,
                           f"ppid={child.get('ppid')} parent={parent_pid}"))

        def reinjected():
            for key in ("reinjected", "re_injected", "env_reinjected"):
                if key in child:
                    return bool(child[key]), f"{key}={child[key]!r}"
            start = child.get("start")
            if isinstance(start, dict) and "reinjected" in start:
                return bool(start["reinjected"]), f"start.reinjected={start['reinjected']!r}"
            raise SchemaError(f"{pname(child)}: key 'reinjected' missing "
                              f"(keys there: {', '.join(sorted(child))})")
        rep.check("the child's trace says its environment was re-injected", reinjected)
        rep.check("the child's CUDA kernels were recorded (CUPTI injected after re-injection)",
                  lambda: (len(kernels_of(child)) > 0,
                           f"{len(kernels_of(child))} kernels: "
                           f"{sorted({shorten(norm_name(kname(k)), 50) for k in kernels_of(child)})[:4]}"))
        rep.check("the child ended with exit status 0",
                  lambda: (end_status(child)[1] == 0, f"end={child.get('end')!r}"))

    forked = [p for p in by_pid.get(fork_pid, []) if origin_of(p) == "fork"]
    rep.check("the os.fork child has a trace with origin fork and the script as parent",
              lambda: (bool(forked) and as_int(forked[0].get("ppid"), "ppid") == parent_pid,
                       f"traces with pid {fork_pid}: "
                       f"{[(p.get('origin'), p.get('ppid')) for p in by_pid.get(fork_pid, [])]}"))
    if forked:
        def fork_end():
            kind, status = end_status(forked[0])
            complete = get(forked[0], "complete", pname(forked[0]))
            if status == 7:
                return True, f"end kind={kind!r} status=7 complete={complete!r}"
            if complete is False and status is None:
                rep.info("the os._exit child's trace says it was cut short (no status known)")
                return True, "truncated trace, said so (allowed)"
            return False, (f"end={forked[0].get('end')!r} parent_saw={forked[0].get('parent_saw')!r} "
                           f"complete={complete!r}")
        rep.check("the os._exit(7) child's trace ends with status 7 or says it was cut short",
                  fork_end)


# ---------------------------------------------------------------------------


def check_ctypes_cublas(rep, dump, facts, args):
    procs = find_processes(dump, rep)
    main = main_process(procs, args.script or "ctypes_cublas.py")
    common_checks(rep, procs, main)
    sgemm = [v for v in vendor_calls_of(main) if str(get(v, "api", "vendor call")) == "cublasSgemm_v2"]
    # The script's torch reference (b @ a) makes its own cublasSgemm_v2 call from
    # libtorch_cuda.so; the ctypes call is the one made from libffi.
    calls = [v for v in sgemm if "ffi" in str(v.get("caller")) or "ctypes" in str(v.get("caller"))]

    def recorded():
        shapes = [tuple((op_of(v) or {}).get(x) for x in "mnk") for v in calls]
        return (len(calls) == 1 and shapes == [(256, 256, 256)],
                f"{len(calls)} call(s) from libffi/_ctypes with (m,n,k) {shapes}; all callers "
                f"{[str(v.get('caller')) for v in sgemm]}")
    rep.check("cublasSgemm_v2 resolved with dlsym (ctypes) is recorded once, from libffi, m=n=k=256",
              recorded)

    def window():
        ids = {v.get("call_id") for v in calls}
        inside = [k for k in kernels_of(main) if vendor_id(k) in ids]
        gemm_outside = [kname(k) for k in kernels_of(main)
                        if vendor_id(k) is None and ("gemm" in kname(k) or "nvjet" in kname(k))]
        return (len(inside) >= 1 and not gemm_outside,
                f"{len(inside)} kernel(s) in its window; GEMM kernels outside any window: {gemm_outside}")
    rep.check("its kernels sit in its vendor window; no GEMM kernel outside one", window)


SCENARIOS = {
    "ctypes_cublas": check_ctypes_cublas,
    "raw_cublas": check_raw_cublas,
    "side_stream": check_side_stream,
    "torch_ops": check_torch_ops,
    "triton_add": check_triton_add,
    "fork_subprocess": check_fork_subprocess,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--dump", required=True, help="kaudit dump --json output")
    ap.add_argument("--stderr", help="stderr of the program's run under kaudit")
    ap.add_argument("--profile", help="torch_ops.py --profile output (torch_ops only)")
    ap.add_argument("--script", help="basename of the program in argv (default per scenario)")
    args = ap.parse_args()

    rep = Report(args.scenario)
    rep.dump = {}
    try:
        with open(args.dump) as f:
            dump = json.load(f)
        rep.dump = dump if isinstance(dump, dict) else {}
    except Exception as exc:
        rep.result(False, "kaudit dump --json output parses as JSON", f"{type(exc).__name__}: {exc}")
        return 1
    rep.result(True, "kaudit dump --json output parses as JSON")
    facts = read_facts(args.stderr)
    try:
        SCENARIOS[args.scenario](rep, dump, facts, args)
    except SchemaError as exc:
        rep.result(False, "scenario checks could not run", f"dump schema: {exc}")
    except Exception as exc:
        rep.result(False, "scenario checks could not run", f"checker error: {type(exc).__name__}: {exc}")
    print(f"INFO {args.scenario}: checker {rep.passed} passed, {rep.failed} failed", flush=True)
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
