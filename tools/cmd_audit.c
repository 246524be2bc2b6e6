/*
 * cmd_audit.c - `kaudit audit --reference REF.py --candidate CAND.py ...`
 *
 * Parses the options and delegates: one audit to audit_one() (audit/), a
 * batch to audit_batch() (cmd_audit_batch.c).  docs/audit.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "audit_shard.h"
#include "audit_weak.h"
#include "cli.h"
#include "commands.h"
#include "judge.h"
#include "schedule.h"

#define AUDIT_USAGE                                                                                              \
    "usage: kaudit audit --reference REF.py --candidate CAND.py [options]\n"                                     \
    "       kaudit audit --batch TASKS.jsonl -o LEDGER.jsonl [--jobs N] [options]\n"                             \
    "\n"                                                                                                         \
    "Audits a KernelBench-format candidate (ModelNew) against its reference (Model, get_inputs,\n"               \
    "get_init_inputs) in a fresh worker recorded under the preload library: the semantic axis from a\n"          \
    "16-slot stress schedule with fp64-calibrated tolerances, the implementation and measurement axes\n"         \
    "from the same recorded session, and the certificate.  Exit 0 PASS, 10 FAIL, 11 INCONCLUSIVE.\n"             \
    "\n"                                                                                                         \
    "  --contract C.json      the task contract (pinned); without it one is written from the reference\n"        \
    "  --device cuda|cpu      where the parties run (cuda); cpu: implementation and measurement UNSUPPORTED\n"   \
    "  --seed N               the audit's seed, to reproduce one (default: drawn from the kernel)\n"             \
    "  -d DIR                 the audit directory (default kaudit.audit, kaudit-2.audit, ...)\n"                 \
    "  --json RECORD.json     also write the record there\n"                                                     \
    "  --weak ACCEPT|REJECT   the weak verifier's decision: prints the outcome code\n"                           \
    "  --weak-surfaces L      run public validators' checks after the audit: all, none (default), or a\n"        \
    "                         list of KernelBench,robust-kbench,CUDA-Agent,KernelGYM,DeepReinforce,\n"           \
    "                         MusaCoder,CUDA-L1 (the record's weak_surfaces)\n"                                  \
    "  --tolerance MODE       reference-floor (default) or paper (Eq. 1 exactly)\n"                              \
    "  --timeout S            the worker's time limit in seconds (600)\n"                                        \
    "  --memory-limit SIZE    stop the worker beyond SIZE of memory held (K, M, G, T; auto: 90% of the\n"       \
    "                         memory available, shared among a batch's jobs; off)\n"                                     \
    "  --disk-limit SIZE      stop it when the audit directory takes more than SIZE (auto: half the free\n"       \
    "                         space, or when the free space falls below min(1G, a tenth of it); off)\n"          \
    "  --build-store DIR|off  keep the candidate's builds for its next audit there (default\n"                   \
    "                         ~/.cache/kaudit/builds; docs/audit.md, \"Builds kept across audits\")\n"         \
    "  --build-store-max SIZE the store's size, past which the entries used longest ago go (8G)\n"            \
    "  --python PY            the Python that runs the runner ($KAUDIT_PYTHON, else python3)\n"                  \
    "  --inventory P|none     the vendor inventory (the bundled calibrated one)\n"                               \
    "  --keep-tensors         keep the outputs the runner wrote (DIR/runner/tensors)\n"                          \
    "  --timing on|off        the timing checks: A/A screen, speedup, stream differential (on for cuda)\n"       \
    "  --probe on|off         the causal probe: forbidden operators' outputs replaced by noise (on)\n"           \
    "  --require L            stress transformations that gate even where the contract does not declare\n"      \
    "                         them: layouts, strided, transposed, shapes (default: the contract's; the\n"    \
    "                         others are run and reported, never gating)\n"                                       \
    "  --claimed-speedup X    the weak validator's speedup, recorded beside the measured one\n"                  \
    "  --allow-write DIR      the worker may also write beneath DIR (up to 8; besides DIR and the build caches)\n" \
    "  --allow-read DIR       the candidate's process may also read beneath DIR (up to 8; a prebuilt library)\n" \
    "  --quiet                print nothing but errors\n"                                                        \
    "batch: --batch TASKS.jsonl (one {\"id\", \"reference\", \"candidate\", [\"contract\", \"weak\"]} per line),\n" \
    "  -o LEDGER.jsonl, --jobs N|auto (2; auto: one per two CPUs and 6 GiB available, at most the pairs);\n"     \
    "  records and audit directories go beside the ledger.\n"                                                    \
    "  --shard i/N (1 <= i <= N): the task lines k (from 0) with k mod N = i-1; without it a Slurm\n"            \
    "  array task's SLURM_ARRAY_TASK_ID/COUNT/MIN pick the shard.  --gpus auto|0,1,...: each worker\n"           \
    "  gets one GPU in turn (CUDA_VISIBLE_DEVICES), --jobs defaulting to one per GPU.\n"

int audit_parse(int argc, char **argv, struct audit_args *a)
{
    memset(a, 0, sizeof *a);
    a->device = "cuda";
    a->timeout_s = 600;
    a->jobs = 2;
    a->timing = -1;
    a->probe = 1;
    static const struct option options[] = {
        { "reference", required_argument, NULL, 'r' }, { "candidate", required_argument, NULL, 'c' },
        { "contract", required_argument, NULL, 'C' },  { "manifest", required_argument, NULL, 'M' },
        { "device", required_argument, NULL, 'D' },    { "seed", required_argument, NULL, 's' },
        { "dir", required_argument, NULL, 'd' },       { "json", required_argument, NULL, 'j' },
        { "weak", required_argument, NULL, 'w' },      { "tolerance", required_argument, NULL, 't' },
        { "timeout", required_argument, NULL, 'T' },   { "python", required_argument, NULL, 'P' },
        { "inventory", required_argument, NULL, 'I' }, { "keep-tensors", no_argument, NULL, 'K' },
        { "quiet", no_argument, NULL, 'q' },           { "batch", required_argument, NULL, 'B' },
        { "jobs", required_argument, NULL, 'J' },      { "output", required_argument, NULL, 'o' },
        { "id", required_argument, NULL, 'i' },        { "allow-write", required_argument, NULL, 'A' },
        { "allow-read", required_argument, NULL, 'R' },
        { "timing", required_argument, NULL, 'g' },    { "probe", required_argument, NULL, 'Q' },    { "claimed-speedup", required_argument, NULL, 'S' },
        { "weak-surfaces", required_argument, NULL, 'W' },
        { "shard", required_argument, NULL, 'H' },     { "gpus", required_argument, NULL, 'G' },
        { "require", required_argument, NULL, 'U' },
        { "memory-limit", required_argument, NULL, 'm' }, { "disk-limit", required_argument, NULL, 'k' },
        { "build-store", required_argument, NULL, 'b' },
        { "build-store-max", required_argument, NULL, 'X' },
        { "help", no_argument, NULL, 'h' },            { NULL, 0, NULL, 0 },
    };
    opterr = 0;
    optind = 1;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, ":d:o:qh", options, NULL)) != -1) {
        switch (c) {
        case 'r': a->reference = optarg; break;
        case 'c': a->candidate = optarg; break;
        case 'C': a->contract = optarg; break;
        case 'M': a->manifest = optarg; break;
        case 'D':
            if (strcmp(optarg, "cuda") && strcmp(optarg, "cpu"))
                return cli_usage_error(AUDIT_USAGE, "--device takes cuda or cpu, not '%s'", optarg);
            a->device = optarg;
            break;
        case 's':
            errno = 0;
            a->seed = strtoull(optarg, &end, 10);
            if (errno || *end || !*optarg || optarg[0] == '-')
                return cli_usage_error(AUDIT_USAGE, "--seed takes a non-negative integer, not '%s'", optarg);
            a->seed_given = 1;
            break;
        case 'd': a->dir = optarg; break;
        case 'j': a->json = optarg; break;
        case 'w':
            if (judge_parse_weak(optarg, &a->weak) != 0)
                return cli_usage_error(AUDIT_USAGE, "--weak takes ACCEPT or REJECT, not '%s'", optarg);
            break;
        case 'W': {
            char werr[512];
            if (audit_weak_parse(optarg, &a->weak_mask, werr, sizeof werr) != 0)
                return cli_usage_error(AUDIT_USAGE, "--weak-surfaces: %s", werr);
            a->weak_surfaces = optarg;
            break;
        }
        case 't':
            if (!strcmp(optarg, "paper"))
                a->paper_tolerance = 1;
            else if (strcmp(optarg, "reference-floor"))
                return cli_usage_error(AUDIT_USAGE, "--tolerance takes reference-floor or paper, not '%s'", optarg);
            break;
        case 'T':
            errno = 0;
            a->timeout_s = strtod(optarg, &end);
            if (errno || *end || !(a->timeout_s > 0) || a->timeout_s > 86400)
                return cli_usage_error(AUDIT_USAGE, "--timeout takes seconds (0 < S <= 86400), not '%s'", optarg);
            break;
        case 'm':
        case 'k': {
            unsigned long long v;
            char lerr[160];
            if (audit_limit_parse(optarg, &v, lerr, sizeof lerr) != 0)
                return cli_usage_error(AUDIT_USAGE, "--%s: %s", c == 'm' ? "memory-limit" : "disk-limit", lerr);
            *(c == 'm' ? &a->memory_limit : &a->disk_limit) = optarg;
            break;
        }
        case 'b':
            if (!*optarg)
                return cli_usage_error(AUDIT_USAGE, "--build-store takes a directory or off, not ''");
            a->build_store = optarg;
            break;
        case 'X': {
            unsigned long long v;
            char lerr[160];
            if (audit_limit_parse(optarg, &v, lerr, sizeof lerr) != 0 || v == AUDIT_LIMIT_AUTO || v == 0)
                return cli_usage_error(AUDIT_USAGE, "--build-store-max takes a size (K, M, G, T; at least 1M), not '%s'", optarg);
            a->build_store_max = optarg;
            break;
        }
        case 'P': a->python = optarg; break;
        case 'I': a->inventory = optarg; break;
        case 'K': a->keep_tensors = 1; break;
        case 'q': a->quiet = 1; break;
        case 'B': a->batch = optarg; break;
        case 'J': {
            a->jobs_given = 1;
            if (!strcmp(optarg, "auto")) {
                a->jobs_auto = 1;
                break;
            }
            long j = strtol(optarg, &end, 10);
            if (*end || j < 1 || j > 256)
                return cli_usage_error(AUDIT_USAGE, "--jobs takes 1 to 256 or auto, not '%s'", optarg);
            a->jobs = (int)j;
            a->jobs_auto = 0;
            break;
        }
        case 'H': {
            struct audit_shard sh;
            char err[256];
            if (audit_shard_parse(optarg, &sh, err, sizeof err) != 0)
                return cli_usage_error(AUDIT_USAGE, "%s", err);
            a->shard = optarg;
            break;
        }
        case 'G': a->gpus = optarg; break;
        case 'o': a->ledger = optarg; break;
        case 'i': a->id = optarg; break;
        case 'A':
            if (a->n_allow_write == (int)(sizeof a->allow_write / sizeof a->allow_write[0]))
                return cli_usage_error(AUDIT_USAGE, "--allow-write is given more than 8 times");
            if (optarg[0] != '/')
                return cli_usage_error(AUDIT_USAGE, "--allow-write takes an absolute directory, not '%s'", optarg);
            a->allow_write[a->n_allow_write++] = optarg;
            break;
        case 'R':
            if (a->n_allow_read == (int)(sizeof a->allow_read / sizeof a->allow_read[0]))
                return cli_usage_error(AUDIT_USAGE, "--allow-read is given more than 8 times");
            if (optarg[0] != '/')
                return cli_usage_error(AUDIT_USAGE, "--allow-read takes an absolute directory, not '%s'", optarg);
            a->allow_read[a->n_allow_read++] = optarg;
            break;
        case 'g':
            if (strcmp(optarg, "on") && strcmp(optarg, "off"))
                return cli_usage_error(AUDIT_USAGE, "--timing takes on or off, not '%s'", optarg);
            a->timing = !strcmp(optarg, "on");
            break;
        case 'Q':
            if (strcmp(optarg, "on") && strcmp(optarg, "off"))
                return cli_usage_error(AUDIT_USAGE, "--probe takes on or off, not '%s'", optarg);
            a->probe = !strcmp(optarg, "on");
            break;
        case 'U': {
            char bad[64];
            if (kat_transforms_parse(optarg, &a->require_transforms, bad, sizeof bad) != 0)
                return cli_usage_error(AUDIT_USAGE, "--require: unknown transformation '%s' (layouts, strided, transposed, shapes)",
                                       bad);
            a->require = optarg;
            break;
        }
        case 'S':
            errno = 0;
            a->claimed_speedup = strtod(optarg, &end);
            if (errno || *end || !*optarg || !(a->claimed_speedup > 0) || !isfinite(a->claimed_speedup))
                return cli_usage_error(AUDIT_USAGE, "--claimed-speedup takes a positive number, not '%s'", optarg);
            a->has_claimed = 1;
            break;
        case 'h': fputs(AUDIT_USAGE, stdout); return -1;
        default: return cli_bad_option(AUDIT_USAGE, c == ':', argv[optind - 1]);
        }
    }
    if (optind != argc)
        return cli_usage_error(AUDIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (a->batch) {
        if (a->reference || a->candidate)
            return cli_usage_error(AUDIT_USAGE, "--batch takes its pairs from the file, not --reference/--candidate");
        if (!a->ledger)
            return cli_usage_error(AUDIT_USAGE, "--batch needs -o LEDGER.jsonl");
        return 0;
    }
    if (a->shard || a->gpus)
        return cli_usage_error(AUDIT_USAGE, "%s splits a batch: it needs --batch", a->shard ? "--shard" : "--gpus");
    if (!a->reference)
        return cli_usage_error(AUDIT_USAGE, "--reference is required");
    if (!a->candidate)
        return cli_usage_error(AUDIT_USAGE, "--candidate is required");
    return 0;
}

int cmd_audit(int argc, char **argv)
{
    struct audit_args a;
    int rc = audit_parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? KAUDIT_EXIT_OK : rc;
    if (a.batch)
        return audit_batch(&a);
    struct audit_result res;
    return audit_one(&a, &res);
}
