"""Run KernelBench's own evaluator, unmodified, on one reference and one
candidate (tests/gpu/real_harness.sh; docs/controls.md, "Real harnesses").

  python3 kernelbench_eval.py KERNELBENCH_REPO REF.py CAND.py [--backend cuda|triton] [--perf-trials N]
                              [--build-dir DIR]

Imports kernelbench.eval from the carried repository (src/ on sys.path) and
calls eval_kernel_against_ref with its documented arguments, the way
KernelBench's scripts and its adversarial unit tests do (timing with CUDA
events, the excessive-speedup check on).  Prints the result and a last line
"WEAK ACCEPT" (compiled and correct) or "WEAK REJECT".  No NVTX marks: kaudit
attributes the work from Python frames alone, as for any unmodified harness.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stubs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("reference")
    ap.add_argument("candidate")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--perf-trials", type=int, default=10)
    ap.add_argument("--correct-trials", type=int, default=5)
    # KernelBench's build_dir: it sets TORCH_EXTENSIONS_DIR there, so the
    # candidate's extension lands where no path pattern names it
    ap.add_argument("--build-dir", default=None)
    args = ap.parse_args()
    stubs.install()
    sys.path.insert(0, os.path.join(args.repo, "src"))
    from kernelbench.eval import eval_kernel_against_ref

    with open(args.reference) as f:
        ref_src = f.read()
    with open(args.candidate) as f:
        cand_src = f.read()
    result = eval_kernel_against_ref(
        original_model_src=ref_src,
        custom_model_src=cand_src,
        num_correct_trials=args.correct_trials,
        num_perf_trials=args.perf_trials,
        measure_performance=True,
        timing_method="cuda_event",
        backend=args.backend,
        check_for_excessive_speedup=True,
        excessive_speedup_threshold=10,
        build_dir=args.build_dir,
    )
    print(result)
    ok = result is not None and getattr(result, "compiled", False) and getattr(result, "correctness", False)
    print("WEAK", "ACCEPT" if ok else "REJECT")


if __name__ == "__main__":
    main()
