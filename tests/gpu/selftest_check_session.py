#!/usr/bin/env python3
"""selftest_check_session.py - check_session.py against synthetic dumps; no GPU.

For each scenario, a dump shaped like the agreed `kaudit dump --json` schema
and the stderr facts its program would print: the checker must pass it.
Then one broken copy per property the suite claims to test (a custom kernel
given a vendor window, a cuBLAS kernel outside one, a kernel missing from the
trace, a wrong elapsed value, a child not re-injected, ...): the checker must
fail each, so a suite that passes on the GPU has really checked something.

    python3 tests/gpu/selftest_check_session.py      # exit 0 when all hold
"""

import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_session.py")


def proc(pid, ppid, argv, origin="exec", kernels=(), calls=(), timing=(), status=0,
         complete=True, health=None, **extra):
    p = {
        "file": f"{pid}.kat", "pid": pid, "ppid": ppid, "origin": origin, "argv": list(argv),
        "complete": complete,
        "end": {"kind": "exit", "status": status} if complete else None,
        "parent_saw": None,
        "counts": {"kernels": len(kernels),
                   "kernels_in_vendor_window": sum(1 for k in kernels if k["vendor_call_id"]),
                   "api_calls": 100, "vendor_calls": len(calls)},
        "kernels": list(kernels), "vendor_calls": list(calls),
        "apis": [{"name": "cudaLaunchKernel", "domain": "runtime", "count": len(kernels)}],
        "modules": [], "libraries": [], "timing_calls": list(timing),
        "health": health if health is not None else [
            {"code": "cupti_library", "detail": "/x/libcupti.so.13", "value": 0},
            {"code": "cupti_dropped", "detail": "", "value": 0}],
    }
    p.update(extra)
    return p


class Ids:
    def __init__(self):
        self.corr = 100
        self.t = 1_000_000

    def kernel(self, name, stream=7, vendor=None):
        self.corr += 1
        self.t += 10_000
        return {"name": name, "correlation_id": self.corr, "vendor_call_id": vendor,
                "stream_id": stream, "start_ns": self.t, "end_ns": self.t + 5_000,
                "grid": [1, 1, 1], "block": [256, 1, 1]}


def call(call_id, api, library, kernels, op=None, depth=1):
    c = {"call_id": call_id, "api": api, "library": library, "caller": "/x/caller.so",
         "depth": depth, "work_class": "gemm",
         "kernel_correlation_ids": [k["correlation_id"] for k in kernels]}
    if op is not None:
        c["op"] = op
    return c


def dump_of(*procs):
    return {"format": "kaudit-dump", "version": 1, "session": {"tool_version": "0.1.0"},
            "processes": list(procs)}


def timing(api, event=0, event2=0, stream=0, elapsed=None, stream_id=None):
    return {"api": api, "name": api, "event": event, "event2": event2, "stream": stream,
            "elapsed_ms": elapsed, "stream_id": stream_id, "status": 0}


# ---- scenario (a) -----------------------------------------------------------

def raw_cublas():
    ids = Ids()
    ks = [ids.kernel("kaudit_fill") for _ in range(3)]
    g1 = [ids.kernel("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_execute_kernel__5x_cublas",
                     vendor=1)]
    ks += g1
    ks += [ids.kernel("sm80_xmma_gemm_f32f32_like_custom") for _ in range(2)]
    ks += [ids.kernel("kaudit_scale_add", stream=13) for _ in range(3)]
    g2 = [ids.kernel("sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_execute_kernel__5x_cublas",
                     stream=13, vendor=2)]
    ks += g2
    ks += [ids.kernel("_ZN12kaudit_tests15checksum_kernelEPKfiPj")]
    op = {"m": 512, "n": 512, "k": 512}
    calls = [call(1, "cublasSgemm_v2", "cublas", g1, op), call(2, "cublasSgemm_v2", "cublas", g2, op)]
    ms = 0.0421
    tim = [timing("cudaEventCreate"), timing("cudaEventRecord", event=0xA0, stream=0),
           timing("cudaEventRecord", event=0xA8, stream=0),
           timing("cudaEventElapsedTime", event=0xA0, event2=0xA8, elapsed=ms)]
    d = dump_of(proc(4242, 4200, ["/tmp/w/bin/raw_cublas"], kernels=ks, calls=calls, timing=tim))
    err = (f"KAUDIT_TEST elapsed_ms sgemm {ms:.9g} {float(ms).hex()} start=0xa0 stop=0xa8 stream=(nil)\n"
           "KAUDIT_TEST launches kaudit_fill 3\nKAUDIT_TEST launches kaudit_scale_add 3\n"
           "KAUDIT_TEST launches sm80_xmma_gemm_f32f32_like_custom 2\n"
           "KAUDIT_TEST launches checksum_kernel 1\nKAUDIT_TEST vendor_calls cublasSgemm_v2 2\n")
    return d, err


def raw_mutations(d):
    m = {}
    x = copy.deepcopy(d)
    for k in x["processes"][0]["kernels"]:
        if k["name"] == "sm80_xmma_gemm_f32f32_like_custom":
            k["vendor_call_id"] = 1
            x["processes"][0]["vendor_calls"][0]["kernel_correlation_ids"].append(k["correlation_id"])
            x["processes"][0]["counts"]["kernels_in_vendor_window"] += 1
    m["custom kernel in a vendor window"] = x
    x = copy.deepcopy(d)
    for k in x["processes"][0]["kernels"]:
        if "__5x_cublas" in k["name"]:
            k["vendor_call_id"] = None
    for c in x["processes"][0]["vendor_calls"]:
        c["kernel_correlation_ids"] = []
    x["processes"][0]["counts"]["kernels_in_vendor_window"] = 0
    m["cuBLAS kernels outside windows"] = x
    x = copy.deepcopy(d)
    ks = x["processes"][0]["kernels"]
    ks.remove(next(k for k in ks if k["name"] == "kaudit_fill"))
    x["processes"][0]["counts"]["kernels"] -= 1
    m["a launch missing from the trace"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["timing_calls"][-1]["elapsed_ms"] = 0.05
    m["wrong elapsed value"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["vendor_calls"][1]["op"] = {"m": 512, "n": 512, "k": 64}
    m["wrong Sgemm shape"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["health"][1]["value"] = 12
    m["dropped CUPTI records"] = x
    x = copy.deepcopy(d)
    del x["processes"][0]["kernels"][0]["vendor_call_id"]
    m["schema: vendor_call_id missing"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["health"].append({"code": "cupti_not_found", "detail": "tried ...", "value": 0})
    m["CUPTI not found"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["read_error"] = "record at offset 4096 has size 3"
    m["a trace with a read error"] = x
    return m


# ---- scenario (d) -----------------------------------------------------------

def side_stream():
    ids = Ids()
    ks = [ids.kernel("kaudit_main_work", stream=7) for _ in range(2)]
    ks += [ids.kernel("kaudit_side_work", stream=13) for _ in range(4)]
    ks += [ids.kernel("kaudit_combine", stream=7)]
    side, joined = 0x5500, 0xB8
    tim = [timing("cudaStreamCreateWithFlags")]
    tim += [timing("cudaEventCreate") for _ in range(4)] + [timing("cudaEventCreateWithFlags")]
    tim += [timing("cudaEventRecord", event=0xB0, stream=0, stream_id=7),
            timing("cudaEventRecord", event=0xB1, stream=0, stream_id=7),
            timing("cudaEventRecord", event=0xA0, stream=side, stream_id=13),
            timing("cudaEventRecord", event=0xA1, stream=side, stream_id=13),
            timing("cudaEventRecord", event=joined, stream=side, stream_id=13),
            timing("cudaStreamWaitEvent", event=joined, stream=0),
            timing("cudaStreamSynchronize", stream=side), timing("cudaEventSynchronize", event=0xB1),
            timing("cudaEventElapsedTime", event=0xA0, event2=0xA1, elapsed=1.25),
            timing("cudaEventElapsedTime", event=0xB0, event2=0xB1, elapsed=0.625),
            timing("cudaDeviceSynchronize")]
    d = dump_of(proc(5000, 4999, ["/tmp/w/bin/side_stream"], kernels=ks, timing=tim))
    err = (f"KAUDIT_TEST stream side={side:#x}\nKAUDIT_TEST event joined={joined:#x}\n"
           f"KAUDIT_TEST elapsed_ms side 1.25 {1.25.hex()} start=0xa0 stop=0xa1 stream={side:#x}\n"
           f"KAUDIT_TEST elapsed_ms main 0.625 {0.625.hex()} start=0xb0 stop=0xb1 stream=(nil)\n"
           "KAUDIT_TEST launches kaudit_main_work 2\nKAUDIT_TEST launches kaudit_side_work 4\n"
           "KAUDIT_TEST launches kaudit_combine 1\n")
    return d, err


def side_mutations(d):
    m = {}
    x = copy.deepcopy(d)
    for k in x["processes"][0]["kernels"]:
        k["stream_id"] = 7
    m["all kernels on one stream"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["timing_calls"] = [t for t in x["processes"][0]["timing_calls"]
                                         if "Wait" not in t["api"]]
    m["stream wait missing"] = x
    x = copy.deepcopy(d)
    for t in x["processes"][0]["timing_calls"]:
        if t["api"] == "cudaEventRecord" and t["event"] == 0xA0:
            t["stream"] = 0
    m["side event recorded on the wrong stream"] = x
    x = copy.deepcopy(d)
    for t in x["processes"][0]["timing_calls"]:
        if t["api"] == "cudaEventRecord" and t["event"] == 0xA0:
            t["stream_id"] = None
    m["an event record without a stream id"] = x
    x = copy.deepcopy(d)
    comb = x["processes"][0]["kernels"][-1]
    comb["start_ns"] = 0
    m["combine before the side work (timestamps)"] = x
    return m


# ---- scenario (b) -----------------------------------------------------------

NATIVE_ADD = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_")
NATIVE_RANDN = ("_ZN2at6native54_GLOBAL__N__d8ceb000_21_DistributionNormal_cu_0c5b6e8543distribution_"
                "elementwise_grid_stride_kernelIfLi4EEEvv")


def torch_ops():
    ids = Ids()
    ks = [ids.kernel(NATIVE_RANDN) for _ in range(2)]
    g32 = [ids.kernel("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_execute_kernel__5x_cublas",
                      vendor=11)]
    ks += g32 + [ids.kernel(NATIVE_RANDN) for _ in range(2)]
    g16 = [ids.kernel("nvjet_sm90_tst_64x48_64x15_2x4_h_bz_NNT", vendor=12)]
    ks += g16 + [ids.kernel(NATIVE_RANDN) for _ in range(2)]
    conv = [ids.kernel("_ZN5cudnn19engines_precompiled16nchwToNhwcKernelIfffLb0ELb1EL21cudnnKernelDataType_t2EEEvNS0_18nchw2nhwc_params_tIT1_EEPKT_PT0_", vendor=13),
            ids.kernel("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x16x64_execute_kernel__5x_cudnn", vendor=13)]
    ks += conv + [ids.kernel(NATIVE_RANDN), ids.kernel(NATIVE_ADD)]
    ks += [ids.kernel("kaudit_inline_scale_kernel") for _ in range(2)]
    calls = [call(10, "cublasCreate_v2", "cublas", []),
             call(11, "cublasSgemm_v2", "cublas", g32, {"m": 320, "n": 384, "k": 256}),
             call(12, "cublasGemmEx", "cublas", g16, {"m": 640, "n": 512, "k": 384}),
             call(13, "cudnnBackendExecute", "cudnn", conv, {"n": 4, "c": 8, "k": 16})]
    d = dump_of(proc(6000, 5999, ["/opt/venv/bin/python3", "tests/gpu/torch_ops.py"], kernels=ks,
                     calls=calls),
                proc(6001, 6000, ["ninja", "-v"], kernels=[]))
    err = ("KAUDIT_TEST inline_mode light\nKAUDIT_TEST gemm fp32 384 256 320\n"
           "KAUDIT_TEST gemm bf16 512 384 640\nKAUDIT_TEST conv 4 8 16 32 32 3 3\n"
           "KAUDIT_TEST launches kaudit_inline_scale_kernel 2\n")
    # The profiler's view: demangled names, as Kineto writes them.
    sys.path.insert(0, HERE)
    import check_session
    prof = {}
    for k in ks:
        n = check_session.demangle(k["name"])
        prof[n] = prof.get(n, 0) + 1
    return d, err, {"chrome_kernel_counts": prof, "errors": []}


def torch_mutations(d):
    m = {}
    x = copy.deepcopy(d)
    ks = x["processes"][0]["kernels"]
    ks.remove(next(k for k in ks if k["name"].startswith("nvjet")))
    x["processes"][0]["counts"]["kernels"] -= 1
    x["processes"][0]["counts"]["kernels_in_vendor_window"] -= 1
    x["processes"][0]["vendor_calls"][2]["kernel_correlation_ids"] = []
    m["a kernel the profiler saw is missing"] = x
    x = copy.deepcopy(d)
    for k in x["processes"][0]["kernels"]:
        if k["name"] == NATIVE_ADD:
            k["vendor_call_id"] = 12
            x["processes"][0]["vendor_calls"][2]["kernel_correlation_ids"].append(k["correlation_id"])
            x["processes"][0]["counts"]["kernels_in_vendor_window"] += 1
    m["at::native kernel in a vendor window"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["vendor_calls"][2]["op"] = {"m": 64, "n": 64, "k": 64}
    m["implausible GEMM shape"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["vendor_calls"][3]["library"] = "cublas"
    m["conv kernels in a cublas window"] = x
    x = copy.deepcopy(d)
    for k in x["processes"][0]["kernels"]:
        if k["name"].startswith("nvjet"):
            k["vendor_call_id"] = None
    x["processes"][0]["vendor_calls"][2]["kernel_correlation_ids"] = []
    x["processes"][0]["counts"]["kernels_in_vendor_window"] -= 1
    m["nvjet kernel outside any window"] = x
    return m


# ---- scenario (c) -----------------------------------------------------------

def triton_add():
    ids = Ids()
    ks = [ids.kernel(NATIVE_RANDN) for _ in range(2)] + [ids.kernel("kaudit_add_kernel") for _ in range(3)]
    d = dump_of(proc(7000, 6999, ["/opt/venv/bin/python3", "tests/gpu/triton_add.py"], kernels=ks),
                proc(7001, 7000, ["/opt/venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ptxas",
                                  "-lineinfo"]),
                # A helper without GPU work may end through _exit with a truncated
                # trace (issue 2 allows it): reported, not failed.
                proc(7002, 7000, ["/usr/bin/gcc", "main.c"], complete=False))
    return d, "KAUDIT_TEST launches kaudit_add_kernel 3\n"


def triton_mutations(d):
    m = {}
    x = copy.deepcopy(d)
    del x["processes"][1]
    m["ptxas child not traced"] = x
    x = copy.deepcopy(d)
    ks = x["processes"][0]["kernels"]
    ks.pop()
    x["processes"][0]["counts"]["kernels"] -= 1
    m["a Triton launch missing"] = x
    x = copy.deepcopy(d)
    x["processes"][0]["complete"] = False
    x["processes"][0]["end"] = None
    m["the program's own trace truncated"] = x
    return m


# ---- scenario (e) -----------------------------------------------------------

def fork_subprocess():
    ids = Ids()
    parent = proc(8000, 7999, ["/opt/venv/bin/python3", "tests/gpu/fork_subprocess.py"],
                  kernels=[ids.kernel(NATIVE_ADD)])
    child = proc(8001, 8000, ["/opt/venv/bin/python3", "-c", "import torch"],
                 kernels=[ids.kernel(NATIVE_ADD), ids.kernel(NATIVE_ADD)], reinjected=True)
    forked = proc(8002, 8000, ["/opt/venv/bin/python3", "tests/gpu/fork_subprocess.py"],
                  origin="fork", status=7)
    forked["end"]["kind"] = "_exit"
    d = dump_of(parent, child, forked)
    err = "KAUDIT_TEST parent_pid 8000\nKAUDIT_TEST child_pid 8001\nKAUDIT_TEST fork_pid 8002\n"
    return d, err


def fork_mutations(d):
    m = {}
    x = copy.deepcopy(d)
    x["processes"][1]["reinjected"] = False
    m["child not flagged re-injected"] = x
    x = copy.deepcopy(d)
    del x["processes"][1]
    m["child not traced"] = x
    x = copy.deepcopy(d)
    x["processes"][1]["kernels"] = []
    x["processes"][1]["counts"]["kernels"] = 0
    m["child traced without CUPTI"] = x
    x = copy.deepcopy(d)
    x["processes"][2]["origin"] = "exec"
    m["fork child not marked fork"] = x
    x = copy.deepcopy(d)
    x["processes"][2]["end"]["status"] = 0
    m["fork child with the wrong status"] = x
    return m


# ---- driver -----------------------------------------------------------------

def run_checker(scenario, dump, err, profile=None):
    with tempfile.TemporaryDirectory() as tmp:
        dp, ep = os.path.join(tmp, "dump.json"), os.path.join(tmp, "err.txt")
        with open(dp, "w") as f:
            json.dump(dump, f)
        with open(ep, "w") as f:
            f.write(err)
        cmd = [sys.executable, CHECKER, scenario, "--dump", dp, "--stderr", ep]
        if profile is not None:
            pp = os.path.join(tmp, "profile.json")
            with open(pp, "w") as f:
                json.dump(profile, f)
            cmd += ["--profile", pp]
        r = subprocess.run(cmd, capture_output=True, text=True)
    lines = r.stdout.splitlines()
    fails = [l for l in lines if l.startswith("FAIL ")]
    passes = [l for l in lines if l.startswith("PASS ")]
    return r.returncode, passes, fails, r.stdout + r.stderr


def main():
    ok = True
    total = 0
    cases = [
        ("raw_cublas", raw_cublas, raw_mutations),
        ("side_stream", side_stream, side_mutations),
        ("torch_ops", torch_ops, torch_mutations),
        ("triton_add", triton_add, triton_mutations),
        ("fork_subprocess", fork_subprocess, fork_mutations),
    ]
    for scenario, make, mutate in cases:
        made = make()
        good, err = made[0], made[1]
        profile = made[2] if len(made) > 2 else None
        rc, passes, fails, out = run_checker(scenario, good, err, profile)
        total += 1
        if rc != 0 or fails or not passes:
            ok = False
            print(f"FAIL selftest {scenario}: a good dump did not pass\n{out}")
        else:
            print(f"PASS selftest {scenario}: good dump passes ({len(passes)} assertions)")
        for what, bad in mutate(good).items():
            total += 1
            rc, passes, fails, out = run_checker(scenario, bad, err, profile)
            if rc == 0 or not fails:
                ok = False
                print(f"FAIL selftest {scenario}: broken dump ({what}) passed\n{out}")
            else:
                print(f"PASS selftest {scenario}: broken dump ({what}) fails: {fails[0][:150]}")
    print("selftest:", "all held" if ok else "FAILED", f"({total} cases)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
