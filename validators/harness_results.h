/*
 * harness_results.h - a harness's own results read as a weak validator's
 * decisions (docs/validators.md, "Harness results"): a validator author runs
 * the harness once under `kaudit run` or beside `kaudit audit --batch` and
 * scores it with `kaudit ledger weak`, joined on the harness's own keys.
 *
 * KernelBench (scripts/eval_from_generations.py): RUN/eval_results.json,
 * {"<problem_id>": [{"sample_id", "compiled", "correctness", ...}, ...]} (an
 * older layout holds one object per problem, sample 0); a sample is ACCEPTed
 * when it compiled and was correct.  Its generated kernels are named
 * level_L_problem_P_sample_S_kernel.py: the join key.
 *
 * CUDA-L1 (eval/eval_cuda.py, eval_pipeline): one log of JSON lines per
 * evaluation, its first line {"info_string", "start_time", "code"} with the
 * candidate's source; the digest of that code (as `kaudit audit` digests the
 * candidate's file) is the join key.  REJECT at a line with "error": true,
 * ACCEPT when the log ends "done": true with a "score".
 *
 * KernelBot (gpu-mode; its problems' eval.py): "key: value" lines on
 * POPCORN_FD, "check: pass" or "check: fail" among them; its runner's work
 * folder holds submission.py, whose digest is the join key.
 */
#ifndef KAV_HARNESS_RESULTS_H
#define KAV_HARNESS_RESULTS_H

#include <stddef.h>

struct kav_kernelbench;

/* Reads an eval_results.json.  0, or -1 with err naming the file and the place. */
int kav_kernelbench_load(const char *path, struct kav_kernelbench **out, char *err, size_t n);
void kav_kernelbench_free(struct kav_kernelbench *k);

/* The problem and sample ids in a KernelBench kernel's file name
 * (.../level_1_problem_3_sample_0_kernel.py): 0, or -1 when it is not one. */
int kav_kernelbench_ids(const char *path, long *problem, long *sample);

/* "ACCEPT", "REJECT", or NULL when the results hold no such sample. */
const char *kav_kernelbench_decision(const struct kav_kernelbench *k, long problem, long sample);

/* Decisions keyed by the digest of the candidate's code (CUDA-L1, KernelBot). */
struct kav_code_decisions;

struct kav_code_decisions *kav_code_decisions_new(void);
void kav_code_decisions_free(struct kav_code_decisions *k);

/* Reads one eval_pipeline log into k: 0; 1 when the run did not finish (no
 * decision, nothing added); -1 with err naming the file and line. */
int kav_cudal1_add(struct kav_code_decisions *k, const char *path, char *err, size_t n);

/* Reads one KernelBot result file (the "key: value" lines its eval.py writes
 * to POPCORN_FD) into k, keyed by the digest of submission.py beside it: 0;
 * 1 when it holds no "check" line; -1 with err naming the file and line. */
int kav_kernelbot_add(struct kav_code_decisions *k, const char *path, char *err, size_t n);

/* "ACCEPT", "REJECT" (any run of that code rejecting it), or NULL; *source
 * names the file it came from. */
const char *kav_code_decision(const struct kav_code_decisions *k, const char *digest, const char **source);

#endif
