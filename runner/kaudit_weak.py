"""kaudit_weak.py - the weak checking surfaces of public validators, run in the
audit's own worker after the audit's work (docs/validators.md, "Weak surfaces").

Each surface reimplements, from the upstream source it cites (file and commit),
the acceptance rule a published kernel-generation pipeline applies to a
candidate: its tolerance, its trial count and seeds, the order in which it
calls the parties, and its extra guards.  No upstream code is copied; the
constants are cited.  A surface decides ACCEPT or REJECT and says why; a
surface that cannot evaluate (the candidate raises, cannot be built, returns
something it cannot compare) REJECTs, as the paper counts it (Section 4:
"Weak REJECT includes failed checks and inability to evaluate").

What the surfaces share, and where they depart from upstream:
  - they run in the audit's process, after the audit: the candidate module is
    the one the audit imported (not re-imported per surface); every surface
    builds fresh instances of both parties, as upstream builds them;
  - the inputs come from the task's get_inputs() under the surface's trial
    seeds, drawn on the audit's device (upstream draws on the CPU and moves
    them): the same distribution, other values;
  - one trial's reference output is computed once and shared by the surfaces
    with the same seeds and reference instance (KernelBench, KernelGYM,
    CUDA-L1, DeepReinforce and MusaCoder all derive their trial seeds from 42
    the same way); each surface's candidate gets its own copy of the inputs
    as they were after the reference's call (what upstream's candidate sees);
  - no CUDA event is recorded and no elapsed time is queried here, so no
    timed window of the measurement axis can begin in this phase; the whole
    phase is inside the NVTX range "kaudit:weak" and each surface inside
    "kaudit:weak <name>", with the parties' calls in their usual ranges
    ("kaudit:candidate", "kaudit:reference"), so their work is attributed
    as it is everywhere else.
"""

import ast
import math
import os
import threading
import time

import torch

# The timing primitives as they were when the runner started, before the
# candidate was imported (DeepReinforce's timing-function guard compares the
# current ones with these).
def _timing_primitives():
    prims = {}
    for owner_name, owner, attrs in (
            ("time", time, ("time", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
                            "process_time")),
            ("torch.cuda", torch.cuda, ("synchronize", "Event", "Stream", "current_stream")),
            ("torch.cuda.Event", getattr(torch.cuda, "Event", None), ("record", "elapsed_time", "synchronize",
                                                                      "query", "wait")),
            ("torch", torch, ("synchronize",) if hasattr(torch, "synchronize") else ())):
        if owner is None:
            continue
        for a in attrs:
            if hasattr(owner, a):
                prims[f"{owner_name}.{a}"] = (owner, a, getattr(owner, a))
    return prims


ORIGINAL_TIMING = _timing_primitives()
_perf_ns = time.perf_counter_ns      # the runner's own clock here, whatever the candidate patches

NAMES = ("KernelBench", "robust-kbench", "CUDA-Agent", "KernelGYM", "DeepReinforce", "MusaCoder", "CUDA-L1")


class CannotEvaluate(Exception):
    """The surface could not reach a decision on its own terms: REJECT."""


def trial_seeds(base, n):
    """KernelBench's derivation (src/kernelbench/eval.py, run_and_check_correctness,
    ScalingIntelligence/KernelBench@423217d9): seed the global generator with
    base, draw n integers in [0, 2^32 - 1).  KernelGYM, CUDA-L1 and
    robust-kbench derive theirs the same way from 42."""
    torch.manual_seed(base)
    return [int(torch.randint(0, 2 ** 32 - 1, (1,)).item()) for _ in range(n)]


def leaves(out, path="out"):
    if isinstance(out, torch.Tensor):
        return [(path, out)]
    if isinstance(out, (list, tuple)):
        got = []
        for i, v in enumerate(out):
            got += leaves(v, f"{path}[{i}]")
        return got
    return [(path, out)]


def allclose_all(ref, cand, tol):
    """torch.allclose(ref, cand, atol=tol, rtol=tol) on every output (tuples
    leaf by leaf); a shape mismatch or a non-tensor fails, as upstream's
    `output.shape` / allclose raise or return False there."""
    rl, cl = leaves(ref), leaves(cand)
    if len(rl) != len(cl):
        return False, f"{len(cl)} outputs, the reference has {len(rl)}"
    for (p, r), (_, c) in zip(rl, cl):
        if not isinstance(r, torch.Tensor) or not isinstance(c, torch.Tensor):
            if r != c:
                return False, f"{p} differs"
            continue
        if tuple(r.shape) != tuple(c.shape):
            return False, f"{p}: output shape mismatch, expected {tuple(r.shape)}, got {tuple(c.shape)}"
        try:
            ok = torch.allclose(r, c, atol=tol, rtol=tol)
        except Exception as exc:
            return False, f"{p}: cannot compare: {type(exc).__name__}: {exc}"[:300]
        if not ok:
            diff = (r.double() - c.double()).abs()
            diff = diff[torch.isfinite(diff)] if diff.numel() else diff
            worst = float(diff.max()) if diff.numel() else float("nan")
            return False, f"{p}: outside atol=rtol={tol:g} (max abs difference {worst:.3g})"
    return True, ""


def tolerance_kernelbench(ref_out):
    """KernelBench's get_tolerance_for_precision (src/kernelbench/eval.py,
    ScalingIntelligence/KernelBench@423217d9): fp32 1e-4, fp16 and bf16 1e-2;
    the precision is the task's, read here from the reference's output."""
    dts = {v.dtype for _, v in leaves(ref_out) if isinstance(v, torch.Tensor) and v.is_floating_point()}
    return 1e-2 if dts and dts <= {torch.float16, torch.bfloat16} else 1e-4


class Surfaces:
    """The weak phase of one audit: runner is kaudit_runner.Runner after its work."""

    def __init__(self, runner, names, log, rt):
        self.r = runner
        self.rt = rt            # the runner's module (kaudit_runner, run as __main__)
        self.names = names
        self.log = log
        self.device = runner.device
        self.cand_path = runner.plan["candidate"]
        self.kb_ref = None
        self.kb_trials = {}     # trial seed -> (inputs after the reference's call, reference output)
        self.kb_bytes = 0

    # --- shared

    def inputs(self, seed):
        """get_inputs() under seed, on the audit's device."""
        got = self.rt.native_inputs(self.r.ref_mod, seed, self.r.native_device)
        return [self.rt.to_device(v, self.device) if k == "t" else v for k, v in got]

    def party(self, which):
        """The party's NVTX range, as the audit's own calls have it."""
        return self.rt.phase(self.r.marks, self.rt.CAND if which == "cand" else self.rt.REF)

    def build(self, cls, seed, what):
        try:
            if seed is not None:
                torch.manual_seed(seed)
            with self.party(what):
                m = cls(*self.rt.clone_tree(self.r.init_inputs)).to(self.device)
                m.eval()
            return m
        except Exception as exc:
            raise CannotEvaluate(f"building {'ModelNew' if what == 'cand' else 'Model'} raised "
                                 f"{type(exc).__name__}: {exc}"[:300])

    def call(self, model, args, party):
        with torch.no_grad():
            with self.party(party):
                out = model(*args)
            if self.device.type == "cuda":
                torch.cuda.synchronize()
        return out

    def cand_call(self, model, args, trial):
        try:
            return self.call(model, args, "cand")
        except Exception as exc:
            raise CannotEvaluate(f"trial {trial}: the candidate raised {type(exc).__name__}: {exc}"[:300])

    def kb_trial(self, seed):
        """One trial of the seed-42 family: the inputs and the reference's
        output (one reference instance built under 42, as KernelBench,
        KernelGYM and CUDA-L1 build theirs)."""
        if seed in self.kb_trials:
            args, out = self.kb_trials[seed]
            return self.rt.clone_tree(args), out
        if self.kb_ref is None:
            self.kb_ref = self.build(self.r.ref_mod.Model, 42, "ref")
        args = self.inputs(seed)
        torch.manual_seed(seed)
        out = self.call(self.kb_ref, args, "ref")
        # kept for the next surface only while small: KernelBench's level-1
        # inputs reach 6.4 GB, ten trials of them would not fit beside the audit's
        size = sum(v.numel() * v.element_size() for _, v in leaves([args, out]) if isinstance(v, torch.Tensor))
        if self.kb_bytes + size <= TRIAL_CACHE_BYTES:
            self.kb_trials[seed] = (args, out)
            self.kb_bytes += size
            return self.rt.clone_tree(args), out
        return args, out

    def fresh_candidate(self, seed=42):
        return self.build(self.r.cand_mod.ModelNew, seed, "cand")

    def allclose_trials(self, n, tol, per_call=None, guard=None):
        """The loop KernelBench, KernelGYM and CUDA-L1 share: one candidate
        instance built under 42; n trials on seeds derived from 42; the
        reference first, then the candidate on the same inputs; every trial
        must pass.  tol: a number, or a function of the reference output."""
        seeds = trial_seeds(42, n)
        cand = self.fresh_candidate()
        first_tol = None
        for t, seed in enumerate(seeds):
            args, ref_out = self.kb_trial(seed)
            if guard:
                guard.before(t)
            out = self.cand_call(cand, args, t + 1)
            if guard:
                guard.after(t, cand, args, out)
            tl = tol(ref_out) if callable(tol) else tol
            if first_tol is None:
                first_tol = tl
            ok, why = allclose_all(ref_out, out, tl)
            if not ok:
                return "REJECT", f"trial {t + 1} of {n}: {why}"
        # the first trial's tolerance, as it was computed: its trial may not
        # be kept (kb_trial keeps trials only up to TRIAL_CACHE_BYTES)
        return "ACCEPT", f"{n} of {n} trials within atol=rtol={first_tol:g}"

    # --- the surfaces

    def kernelbench(self):
        # ScalingIntelligence/KernelBench@423217d9, src/kernelbench/eval.py:
        # run_and_check_correctness (seeds from 42, reference then candidate on
        # the same inputs, torch.allclose, every trial must pass),
        # get_tolerance_for_precision (fp32 1e-4; fp16/bf16 1e-2), and
        # num_correct_trials = 5 (scripts/eval_from_generations.py).
        return self.allclose_trials(5, tolerance_kernelbench)

    def kernelgym(self):
        # hkust-nlp/KernelGYM@3a84417f, kernelgym/toolkit/kernelbench/correctness.py:
        # run_and_check_correctness, allclose atol=rtol=1e-02; num_correct_trials
        # 5 (kernelgym/schema/task.py, kernelgym/config/settings.py "standard").
        # The upstream decoy-kernel signal is not included (paper Table 4).
        return self.allclose_trials(5, 1e-2)

    def cuda_l1(self):
        # deepreinforce-ai/CUDA-L1@51e8356b, eval/eval_cuda.py: eval() calls
        # eval_pipeline with num_correct_trials=10; check_kernel_correctness
        # derives its trial seeds from 42 and compares with
        # torch.allclose(atol=1e-02, rtol=1e-02); before it,
        # validate_no_lazy_evaluation (plain tensor, right device, storage).
        cand = self.fresh_candidate()
        out = self.cand_call(cand, self.inputs(42), "of the lazy-output check")
        bad = lazy_output(out, self.device)
        if bad:
            return "REJECT", "lazy-output check: " + bad
        return self.allclose_trials(10, 1e-2)

    def robust_kbench(self):
        # SakanaAI/robust-kbench@078f5bab, robust_kbench/sandbox/correct_forward_fn.py:
        # check_forward_correctness: trial seeds from 42; per trial the inputs
        # and BOTH models built under the trial seed; candidate, reference,
        # candidate again on the same inputs; both candidate outputs within
        # allclose atol=rtol=1e-5 (defaults of
        # robust_kbench/primitives/forward/cuda_correct.py); 5 trials, repeated
        # for every init/input configuration of the task (cuda_correct).  A
        # KernelBench-format task has one configuration: its own
        # get_init_inputs() and get_inputs().
        n, tol = 5, 1e-5
        for t, seed in enumerate(trial_seeds(42, n)):
            args = self.inputs(seed)
            ref = self.build(self.r.ref_mod.Model, seed, "ref")
            cand = self.build(self.r.cand_mod.ModelNew, seed, "cand")
            out1 = self.cand_call(cand, args, t + 1)
            ref_out = self.call(ref, args, "ref")
            out2 = self.cand_call(cand, args, t + 1)
            for which, out in (("first", out1), ("second", out2)):
                ok, why = allclose_all(ref_out, out, tol)
                if not ok:
                    return "REJECT", f"trial {t + 1} of {n}, the candidate's {which} call: {why}"
            del ref, cand, out1, out2, ref_out
        return "ACCEPT", f"{n} of {n} trials (candidate, reference, candidate) within atol=rtol={tol:g}"

    def cuda_agent(self):
        # BytedTsinghua-SIA/CUDA-Agent@473025c8, agent_workdir/utils/verification.py:
        # Model and ModelNew built, ModelNew given the reference's state_dict
        # (strict); 5 checks on get_inputs() (the candidate on clones), the
        # candidate called with every public callable of torch.nn.functional
        # replaced by one that raises; outputs compared by type, then
        # torch.testing.assert_close(atol=1e-2, rtol=1e-2).  Upstream does not
        # seed; here the generator is seeded from the audit's seed so that
        # a record can be reproduced.
        torch.manual_seed(self.r.seed + 0xA6E)
        ref = self.build(self.r.ref_mod.Model, None, "ref")
        cand = self.build(self.r.cand_mod.ModelNew, None, "cand")
        try:
            cand.load_state_dict(ref.state_dict())
        except Exception as exc:
            raise CannotEvaluate(f"load_state_dict of the reference's state raised {type(exc).__name__}: {exc}"[:300])
        n = 5
        for t in range(n):
            args = self.inputs(self.r.seed + 0xA6E + t)
            cargs = self.rt.clone_tree(args)
            ref_out = self.call(ref, args, "ref")
            with functional_blocked():
                try:
                    out = self.call(cand, cargs, "cand")
                except Exception as exc:
                    raise CannotEvaluate(f"check {t + 1}: the candidate raised {type(exc).__name__}: {exc}"[:300])
            why = check_equal(out, ref_out)
            if why:
                return "REJECT", f"check {t + 1} of {n}: {why}"
        return "ACCEPT", f"{n} of {n} checks within assert_close atol=rtol=1e-2, torch.nn.functional blocked"

    def deepreinforce(self):
        # A publication-derived reconstruction (paper Table 4): no evaluator
        # code is published with it.  Source: DeepReinforce, "Hacks and
        # defenses in automatic GPU kernel generation"
        # (https://deep-reinforce.com/defense_kernel_hack.html, retrieved
        # 2026-12-02; ornith.ai/defense_kernel_hack.html in the paper's
        # references): allclose 1e-2 over 5 trials (seeds from 42, as the
        # team's CUDA-L1 evaluator), and four guards:
        #   timing: the timing functions are the ones that existed before the
        #     candidate was imported ("verify function references");
        #   materialization: every output a plain tensor with storage on the
        #     device (as CUDA-L1's validate_no_lazy_evaluation);
        #   threads: no thread left running after a call ("check thread count
        #     before/after");
        #   stream: the call timed with a device-wide synchronize against the
        #     call timed with the current stream's only ("add synchronize()
        #     before end_event"); a ratio above STREAM_RATIO (and a gap above
        #     STREAM_MIN_GAP_MS) means work outside the timed stream.  The two
        #     constants are ours: the post gives none.
        patched = timing_patched()
        if patched:
            return "REJECT", "timing guard: " + patched
        guard = ThreadsAndLaziness(self.device)
        verdict, why = self.allclose_trials(5, 1e-2, guard=guard)
        if guard.failure:
            return "REJECT", guard.failure
        if verdict != "ACCEPT":
            return verdict, why
        patched = timing_patched()
        if patched:
            return "REJECT", "timing guard (after the calls): " + patched
        if self.device.type == "cuda":
            ratio, why_stream = self.stream_ratio()
            if why_stream:
                return "REJECT", why_stream
            return "ACCEPT", why + f"; guards passed (stream ratio {ratio:.2f})"
        return "ACCEPT", why + "; guards passed (stream guard not applicable on the CPU)"

    def stream_ratio(self):
        cand = self.fresh_candidate()
        args, _ = self.kb_trial(trial_seeds(42, 1)[0])

        def timed(full):
            torch.cuda.synchronize()
            t0 = _perf_ns()
            with torch.no_grad():
                with self.party("cand"):
                    cand(*args)
            if full:
                torch.cuda.synchronize()
            else:
                torch.cuda.current_stream().synchronize()
            return (_perf_ns() - t0) / 1e6
        try:
            timed(True)
            stream = sorted(timed(False) for _ in range(5))[2]
            full = sorted(timed(True) for _ in range(5))[2]
        except Exception as exc:
            raise CannotEvaluate(f"stream guard: the candidate raised {type(exc).__name__}: {exc}"[:300])
        ratio = full / stream if stream > 0 else math.inf
        if ratio > STREAM_RATIO and full - stream > STREAM_MIN_GAP_MS:
            return ratio, (f"stream guard: the call takes {full:.3f} ms with a device synchronize and {stream:.3f} ms "
                           f"with the current stream's (ratio {ratio:.2f} > {STREAM_RATIO:g}): work outside the timed stream")
        return ratio, None

    def musacoder(self):
        # A publication-derived reconstruction (paper Table 4 and Section 6:
        # "static high-level fallback scan ... within a five-category
        # policy"; MusaCoder's evaluator is not published): allclose 1e-2
        # over 5 trials (seeds from 42), after a static scan of the
        # candidate's Python source that REJECTs a call of a high-level
        # PyTorch operator of five core categories (FALLBACK_CATEGORIES:
        # GEMM, convolution, normalization, reduction/softmax, pooling):
        # the work handed back to the framework instead of a kernel.
        # Source strings (an inline CUDA kernel's text) are not code and are
        # not scanned.
        try:
            with open(self.cand_path, encoding="utf-8", errors="replace") as f:
                source = f.read()
            tree = ast.parse(source)
        except (OSError, SyntaxError) as exc:
            raise CannotEvaluate(f"cannot read the candidate's source: {exc}")
        hit = fallback_scan(tree)
        if hit:
            return "REJECT", "fallback scan: " + hit
        verdict, why = self.allclose_trials(5, 1e-2)
        return verdict, why + ("; fallback scan clean" if verdict == "ACCEPT" else "")

    SURFACES = {"KernelBench": kernelbench, "robust-kbench": robust_kbench, "CUDA-Agent": cuda_agent,
                "KernelGYM": kernelgym, "DeepReinforce": deepreinforce, "MusaCoder": musacoder, "CUDA-L1": cuda_l1}

    def run(self):
        t_all = time.monotonic()
        self.log.event("weak_start", surfaces=list(self.names))
        self.r.marks.push("kaudit:weak")
        turn = getattr(self.r, "turn", None)
        try:
            for name in self.names:
                if turn is not None:
                    turn.pause()   # lets another audit's timed phase in (docs/timing.md)
                t0 = time.monotonic()
                self.r.marks.push("kaudit:weak " + name)
                threads = threading.active_count()
                try:
                    decision, reason = self.SURFACES[name](self)
                except CannotEvaluate as exc:
                    decision, reason = "REJECT", "could not evaluate: " + str(exc)
                except BaseException as exc:   # SystemExit from a candidate too
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    decision, reason = "REJECT", f"could not evaluate: {type(exc).__name__}: {exc}"[:400]
                finally:
                    self.r.marks.pop()
                self.log.event("weak", surface=name, decision=decision, reason=reason,
                               seconds=round(time.monotonic() - t0, 3),
                               threads_left=max(0, threading.active_count() - threads))
        finally:
            self.r.marks.pop()
        self.log.event("weak_done", seconds=round(time.monotonic() - t_all, 3))


STREAM_RATIO = 1.5
# The shared trials kept between surfaces (recomputed beyond); the
# environment can lower it (tests: 0 keeps none, as large inputs do on a GPU).
def _trial_cache_bytes(default=1 << 30):
    # a value that is not a whole number keeps the default: this module is
    # imported by every audit, with or without weak surfaces
    try:
        return max(0, int(os.environ.get("KAUDIT_WEAK_TRIAL_CACHE_BYTES", default)))
    except ValueError:
        return default


TRIAL_CACHE_BYTES = _trial_cache_bytes()
STREAM_MIN_GAP_MS = 0.05


def timing_patched():
    changed = [name for name, (owner, attr, orig) in ORIGINAL_TIMING.items()
               if getattr(owner, attr, None) is not orig]
    if changed:
        return "timing functions replaced since the runner started: " + ", ".join(sorted(changed))
    return None


def lazy_output(out, device):
    """CUDA-L1's validate_no_lazy_evaluation checks (eval/eval_cuda.py,
    deepreinforce-ai/CUDA-L1@51e8356b), reimplemented: every output a
    tensor, of the plain type, on the device, with storage and a non-null
    pointer."""
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    for i, o in enumerate(outs):
        where = f"output[{i}]" if len(outs) > 1 else "output"
        if not isinstance(o, torch.Tensor):
            return f"{where} is not a tensor: {type(o).__name__}"
        if type(o).__name__ not in ("Tensor", "Parameter"):
            return f"{where} is {type(o).__name__}, not a plain torch.Tensor"
        if o.device.type != device.type:
            return f"{where} is on {o.device}, not {device}"
        try:
            storage = o.untyped_storage() if hasattr(o, "untyped_storage") else o.storage()
            size = storage.size() if not hasattr(storage, "nbytes") else storage.nbytes()
        except Exception as exc:
            return f"{where}: cannot access its storage: {exc}"
        if o.numel() and size == 0:
            return f"{where} has no allocated storage"
        if o.numel() and o.data_ptr() == 0:
            return f"{where} has a null data pointer"
    return None


class ThreadsAndLaziness:
    """DeepReinforce's thread and materialization guards around each call."""

    def __init__(self, device):
        self.device = device
        self.failure = None

    def before(self, trial):
        self.threads = threading.active_count()

    def after(self, trial, model, args, out):
        if self.failure:
            return
        now = threading.active_count()
        if now > self.threads:
            self.failure = (f"thread guard: {now - self.threads} thread(s) started by the candidate's call in "
                            f"trial {trial + 1} still run after it returned")
            return
        bad = lazy_output(out, self.device)
        if bad:
            self.failure = f"materialization guard, trial {trial + 1}: {bad}"


class functional_blocked:
    """CUDA-Agent's block_torch_functional, reimplemented: every public
    callable of torch.nn.functional replaced by one that raises, put back on
    exit whatever happened."""

    def __enter__(self):
        import torch.nn.functional as F
        self.F = F
        self.saved = {}
        for name in dir(F):
            if name.startswith("_"):
                continue
            attr = getattr(F, name)
            if callable(attr):
                self.saved[name] = attr

                def blocked(*a, __name=name, **k):
                    raise RuntimeError(f"Function torch.nn.functional.{__name} is not allowed in this context.")
                setattr(F, name, blocked)
        return self

    def __exit__(self, *exc):
        for name, attr in self.saved.items():
            setattr(self.F, name, attr)
        return False


def check_equal(actual, expected, path="output"):
    """CUDA-Agent's check_equal (verification.py), reimplemented: same type,
    same length, recursively; tensors by torch.testing.assert_close with
    atol=rtol=1e-2 (which also requires the same dtype, device and shape).
    Returns why not, or None."""
    if type(actual) != type(expected):
        return f"{path}: type {type(actual).__name__}, the reference's is {type(expected).__name__}"
    if isinstance(actual, (list, tuple)):
        if len(actual) != len(expected):
            return f"{path}: {len(actual)} items, the reference has {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            why = check_equal(a, e, f"{path}[{i}]")
            if why:
                return why
        return None
    if isinstance(actual, dict):
        for k, v in expected.items():
            if k not in actual:
                return f"{path}: missing key {k!r}"
            why = check_equal(actual[k], v, f"{path}[{k!r}]")
            if why:
                return why
        return None
    if isinstance(actual, (str, float, int)):
        return None if actual == expected else f"{path}: {actual!r} != {expected!r}"
    if isinstance(actual, torch.Tensor):
        try:
            torch.testing.assert_close(actual, expected, atol=1e-2, rtol=1e-2)
        except AssertionError as exc:
            first = [ln for ln in str(exc).splitlines() if ln.strip()]
            return f"{path}: assert_close atol=rtol=1e-2: " + " ".join(first[:3])[:300]
        return None
    return f"{path}: unsupported output type {type(actual).__name__}"


# The five categories of MusaCoder's reconstructed fallback scan: the
# high-level PyTorch operators that do a task's core work.  A call of any of
# these names (torch.X, F.X, a tensor method .X, an nn.X module built), or
# the matrix-multiply operator @, is a fallback.
FALLBACK_CATEGORIES = {
    "gemm": {"matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "einsum", "linear", "bilinear", "Linear",
             "Bilinear", "mv", "addmv", "tensordot", "chain_matmul", "inner", "outer", "dot", "vdot"},
    "convolution": {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
                    "convolution", "unfold", "fold"},
    "normalization": {"batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm",
                      "normalize", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
                      "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm"},
    "reduction": {"softmax", "log_softmax", "logsumexp", "sum", "mean", "prod", "var", "std", "norm",
                  "cumsum", "cumprod", "Softmax", "LogSoftmax"},
    "pooling": {"max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
                "adaptive_max_pool2d", "adaptive_max_pool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d",
                "AvgPool2d", "AvgPool3d", "scaled_dot_product_attention", "MultiheadAttention"},
}
_FALLBACK = {name: cat for cat, names in FALLBACK_CATEGORIES.items() for name in names}


def fallback_scan(tree):
    """The first high-level fallback in the candidate's source, or None."""
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            hits.append((node.lineno, "gemm", "@"))
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in _FALLBACK:
                hits.append((node.lineno, _FALLBACK[name], name))
    if not hits:
        return None
    line, cat, name = min(hits)
    return f"line {line} calls {name} ({cat}), a high-level operator of the five-category policy"
