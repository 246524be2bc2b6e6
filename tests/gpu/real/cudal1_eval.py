"""Run CUDA-L1's evaluator (eval/eval_cuda.py), unmodified, on one reference
and one candidate (tests/gpu/real_harness.sh).

  python3 cudal1_eval.py CUDAL1_REPO REF.py CAND.py LOG.json

Calls eval_pipeline the way its eval() does ("vanilla" setup: the reference
is also the warm-up), with fewer trials so that a run fits the GPU budget.
Prints a last line "WEAK ACCEPT" when the pipeline logged a score without an
error, "WEAK REJECT" otherwise.
"""
import json
import os
import sys


def main():
    repo, ref_path, cand_path, log_path = sys.argv[1:5]
    sys.path.insert(0, os.path.join(repo, "eval"))
    import eval_cuda

    with open(ref_path) as f:
        ref = f.read()
    with open(cand_path) as f:
        cand = f.read()
    out = eval_cuda.eval_pipeline(
        warmup_src=ref,
        original_model_src=ref,
        custom_model_src=cand,
        num_correct_trials=3,
        num_perf_trials=5,
        global_n_trials=2,
        gpu_index=0,
        verbose=False,
        log_path=log_path,
        max_time=600,
        original_eval_setup="vanilla",
    )
    print("pipeline returned", out)
    errors = 0
    try:
        with open(log_path) as f:
            for line in f:
                errors += bool(json.loads(line).get("error"))
    except Exception as e:  # a missing or torn log is a rejection
        print("cannot read the log:", e)
        errors = 1
    print("WEAK", "REJECT" if errors or out is None or (isinstance(out, tuple) and out[0] is None) else "ACCEPT")


if __name__ == "__main__":
    main()
