/*
 * analysis.h - verdicts from a recorded session and a task contract
 * (docs/analysis.md).
 *
 * ka_analyze reads every trace of a session twice, streaming: the first pass
 * indexes what kernels are joined to (API calls, vendor calls, NVTX phases,
 * threads, events, modules); the second streams the kernel records, classifies
 * each one by origin (vendor, framework, candidate, unattributed) and by party
 * (candidate, reference, harness, unknown), sums the work per class, and checks
 * each candidate kernel against the timed windows.  Kernels are never held in
 * memory: memory grows with API records and vendor calls, not with kernels.
 *
 * The verdicts follow the KernelAudit paper (Sections 3.1, 3.3-3.5, Tables 1-2):
 * FAIL only on candidate-attributable evidence, INCONCLUSIVE with a root cause
 * when an auditability precondition is unmet, and a tool failure alone never
 * convicts.  The semantic axis needs stress runs and is UNSUPPORTED here.
 */
#ifndef KAUDIT_ANALYSIS_H
#define KAUDIT_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "contract.h"

struct kinv_inventory;

enum ka_verdict { KA_PASS = 0, KA_FAIL, KA_INCONCLUSIVE, KA_UNSUPPORTED };
const char *ka_verdict_name(enum ka_verdict v);     /* "PASS", "FAIL", "INCONCLUSIVE", "UNSUPPORTED" */
const char *ka_certificate_name(enum ka_verdict v); /* the same, but INCONCLUSIVE is "INCONCL" (paper Table 1) */

enum ka_axis { KA_AXIS_SEMANTIC = 0, KA_AXIS_IMPLEMENTATION, KA_AXIS_MEASUREMENT, KA_AXIS_COUNT };
const char *ka_axis_name(enum ka_axis a);

/* Who caused a launch or a call. */
enum ka_party { KA_PARTY_UNKNOWN = 0, KA_PARTY_CANDIDATE, KA_PARTY_REFERENCE, KA_PARTY_HARNESS, KA_PARTY_COUNT };
const char *ka_party_name(enum ka_party p);

/* Where a kernel's code came from. */
enum ka_origin {
    KA_ORIGIN_VENDOR = 0,       /* inside a vendor call window, or a vendor module by loader/digest */
    KA_ORIGIN_FRAMEWORK,        /* PyTorch's own kernels (name or module) */
    KA_ORIGIN_CANDIDATE,        /* the candidate's own code */
    KA_ORIGIN_UNATTRIBUTED,
    KA_ORIGIN_COUNT
};
const char *ka_origin_name(enum ka_origin o);

/* One line of evidence behind an axis verdict. */
enum ka_finding_kind {
    KA_FINDING_CONVICTS = 1,    /* supports FAIL */
    KA_FINDING_UNRESOLVED,      /* an unmet precondition (why INCONCLUSIVE) */
    KA_FINDING_SIGNAL,          /* recorded, never gating */
    KA_FINDING_SUPPORT,         /* positive evidence behind a PASS */
};
const char *ka_finding_kind_name(enum ka_finding_kind k);

/*
 * A finding's structured fields (report format version 2: "fields" in the JSON
 * report), in addition to its text: the kernel, stream, ids, times and amounts
 * it is about.  Keys are the stable names of docs/report-format.md.
 */
enum ka_field_type { KA_FIELD_STRING = 1, KA_FIELD_UINT, KA_FIELD_NUMBER };
struct ka_field {
    char key[24];
    enum ka_field_type type;
    char *s;                    /* KA_FIELD_STRING */
    uint64_t u;                 /* KA_FIELD_UINT (written as an exact integer) */
    double d;                   /* KA_FIELD_NUMBER */
};

struct ka_finding {
    enum ka_axis axis;
    enum ka_finding_kind kind;
    char code[48];              /* stable identifier, e.g. "forbidden-vendor-call" (docs/analysis.md) */
    char *text;                 /* one line for people */
    char *process;              /* trace file name, or NULL */
    uint64_t time_ns;           /* when, or 0 */
    struct ka_field *fields;    /* NULL when the finding has none */
    size_t n_fields;
};

struct ka_axis_result {
    enum ka_verdict verdict;
    char *root_cause;           /* for INCONCLUSIVE / UNSUPPORTED / FAIL: one line */
};

/* Per-class work, in FLOPs (gemm, conv, attention) or elements (the rest). */
struct ka_work {
    double amount[KA_CLASS_COUNT];
    uint64_t items[KA_CLASS_COUNT];
};

enum ka_weak { KA_WEAK_NONE = 0, KA_WEAK_ACCEPT, KA_WEAK_REJECT };

/*
 * The semantic axis as `kaudit audit` decided it from its stress runs
 * (semantic/semantic.h), handed to the analysis so that the certificate and
 * the outcome code aggregate all three axes of one record.
 */
struct ka_semantic_finding {
    enum ka_finding_kind kind;
    const char *code, *text;
};
struct ka_semantic_evidence {
    enum ka_verdict verdict;          /* PASS, FAIL or INCONCLUSIVE */
    const char *root_cause;           /* NULL for PASS */
    const char *degenerate;           /* R-B measured on the reference's outputs, or NULL */
    int signature;                    /* a FAIL reproduced by a stress input the provider does not draw */
    const struct ka_semantic_finding *findings;
    size_t n_findings;
};

/*
 * The causal probe's evidence (`kaudit audit`: runner/kaudit_probe.py,
 * audit/audit_probe.c; docs/analysis.md, "Causal probe"): the candidate's
 * call replayed with the outputs of its forbidden-class ATen operators
 * replaced by seeded noise, and how far its output moved.
 */
/* The vendor channel's families of library calls: cuBLAS and cuBLASLt GEMMs
 * (class gemm), cuDNN convolutions (class conv). */
enum ka_probe_family { KA_PROBE_FAMILY_NONE = 0, KA_PROBE_FAMILY_GEMM = 1, KA_PROBE_FAMILY_CONV = 2, KA_PROBE_FAMILIES };
#define KA_PROBE_VENDOR_CALLS 16

enum ka_probe_state {
    KA_PROBE_NOT_RUN = 0,
    KA_PROBE_DECIDED,           /* the replays ran and passed their checks */
    KA_PROBE_NO_TARGETS,        /* the candidate's call dispatched no operator of a targeted class */
    KA_PROBE_UNRESOLVED,        /* a check failed: why */
};
/* The probe's unperturbed baseline against the reference on the probe's own inputs. */
enum ka_probe_baseline {
    KA_PROBE_BASELINE_UNCHECKED = 0,    /* no reference output was logged (a runner before the check) */
    KA_PROBE_BASELINE_MATCH,            /* within the calibrated tolerance, every leaf */
    KA_PROBE_BASELINE_MISMATCH,         /* a leaf outside it, or another structure: convicts */
    KA_PROBE_BASELINE_UNVERIFIED,       /* no tolerance could be calibrated, or the reference did not run */
};

struct ka_probe_evidence {
    enum ka_probe_state state;
    const char *why;                    /* UNRESOLVED: the check that failed, and how */
    /* Only a baseline that matches the reference lets the replays clear forbidden
       work (a candidate that recognises the probe and answers otherwise under it
       would clear anything); a mismatch convicts whatever the replays say. */
    enum ka_probe_baseline baseline;
    const char *baseline_why;           /* MISMATCH, UNVERIFIED, UNCHECKED: how */
    double threshold;                   /* the relative output change that convicts (1e-3) */
    double joint_delta;                 /* every target perturbed at once */
    double noise_floor;                 /* two unperturbed calls */
    uint64_t seed;
    unsigned classes;                   /* the targeted classes the call dispatched (bit set) */
    double class_delta[KA_CLASS_COUNT]; /* each class alone (localization); < 0: not replayed alone */
    double class_work[KA_CLASS_COUNT];  /* their work from the operators' sizes (flop or element), 0 unknown */
    uint64_t class_calls[KA_CLASS_COUNT];
    const char *targets;                /* for people: "mm x2 (gemm), ..." */
    /* the vendor-boundary channel: every library output of the call (cuBLAS and
       cuBLASLt GEMMs, cuDNN convolutions) replaced after the real call (the work
       below the dispatcher) */
    int vendor;                         /* that replay ran and passed its checks */
    uint64_t vendor_calls;              /* the library calls the baseline made */
    uint64_t vendor_family_calls[KA_PROBE_FAMILIES]; /* by family (enum ka_probe_family) */
    double vendor_delta;
    double vendor_family_delta[KA_PROBE_FAMILIES];   /* one family alone; < 0: not replayed alone */
    /* one call at a time (localization, at most VENDOR_CALLS_LOCALIZED of the
       runner): the call as the preload described it, and the output's change */
    unsigned n_vendor_localized;
    struct ka_probe_vendor_call {
        int family;
        uint32_t library;               /* KAT_LIB_* */
        int64_t m, n, k;                /* GEMMs; 0 for convolutions */
        double delta;
    } vendor_call[KA_PROBE_VENDOR_CALLS];
};

/* The work of an ATen operator from its sizes ("aten::mm, ..., sizes = [[64, 512], [512, 256]]"):
 * FLOPs for gemm, elements else (*unit says which), 0 when not estimable. */
double ka_operator_work(const char *message, int cls, const char **unit);

/* The classes the causal probe targets under contract c (NULL: the default
 * core classes): bit set of enum ka_class. */
unsigned ka_probe_classes(const struct ka_contract *c);
/* The plan's probe targets, {"names": {op: class}, "prefixes": [[prefix, class]]}:
 * malloc'd JSON, NULL when nothing is targeted. */
char *ka_probe_targets_json(const struct ka_contract *c);

struct ka_options {
    const struct kinv_inventory *inventory;     /* may be NULL */
    const char *inventory_path;                 /* for the report */
    enum ka_weak weak;
    /*
     * The semantic axis comes from stress runs, which traces cannot replace.
     * A verdict from a separate semantic run can be supplied (PASS, FAIL or
     * INCONCLUSIVE); without one the axis is UNSUPPORTED.
     */
    int semantic_given;
    enum ka_verdict semantic;
    /* From `kaudit audit`: takes precedence over semantic_given. */
    const struct ka_semantic_evidence *semantic_evidence;
    /* From `kaudit audit`: the causal probe, or NULL (not run). */
    const struct ka_probe_evidence *probe;
    /*
     * From `kaudit audit --weak-surfaces` with a surface to run: the runner's
     * "kaudit:weak" range then marks the weak surfaces' phase, whose work is
     * left out.  Anywhere else (`kaudit analyze` of any session, an audit
     * without surfaces) there is no such phase, and a range of that name is
     * the program's: honoured, it would hide every later kernel.
     */
    int weak_phase_expected;
    /*
     * From `kaudit audit`: what the reference's own process has in its
     * command line (the runner's path).  The candidate runs in processes of
     * its own, where it can open any NVTX range and name any Python class:
     * there a reference phase is not the reference's (its launches are the
     * candidate's), and a "kaudit:weak" range is not the weak surfaces'.
     * NULL (`kaudit analyze`): one process may hold both parties, and every
     * phase is taken as named.
     */
    const char *reference_process;
    /*
     * When set, the traces are not judged: the implementation and
     * measurement axes are UNSUPPORTED with this reason (`kaudit audit
     * --device cpu`: no GPU work to attribute or to time).
     */
    const char *trace_axes_unsupported;
    /* With trace_axes_unsupported: INCONCLUSIVE instead of UNSUPPORTED (the
     * traces exist but cannot be trusted: a broken seal). */
    int trace_axes_inconclusive;
    /*
     * Read CUDA_EVENT records for their stream ids only, not their GPU
     * timestamps, so the stop events' GPU times are bounded from stream
     * order as in a trace recorded without them (the default since the
     * event activity kind was found to slow every launch).  For tests that
     * check the bounds on recordings that have the exact times.
     */
    int event_times_from_stream_order;
    /* Optional timeline sink (kaudit report --perfetto). */
    void *sink_arg;
    void (*on_process)(void *arg, uint32_t pid, const char *label);
    void (*on_kernel)(void *arg, uint32_t pid, const char *name, uint32_t stream, uint64_t start_ns,
                      uint64_t end_ns, enum ka_origin origin, enum ka_party party, enum ka_class cls,
                      uint64_t vendor_call_id);
    void (*on_vendor_call)(void *arg, uint32_t pid, uint32_t tid, const char *api, uint64_t call_id,
                           uint64_t enter_ns, uint64_t exit_ns, enum ka_party party);
    void (*on_phase)(void *arg, uint32_t pid, uint32_t tid, const char *name, uint64_t start_ns, uint64_t end_ns);
    void (*on_window)(void *arg, uint32_t pid, unsigned index, uint32_t stream, uint64_t gpu_start_ns,
                      uint64_t gpu_end_ns, float elapsed_ms);
    /* A window whose stop event has no GPU timestamp: the times between which it
     * completed (stream-order bounds; 0 or UINT64_MAX where unbounded). */
    void (*on_stop_bounds)(void *arg, uint32_t pid, unsigned index, uint32_t stream, uint64_t lo_ns,
                           uint64_t hi_ns, float elapsed_ms);
};

struct ka_analysis {
    char *session_dir;
    char *contract_file;
    char *task_id;
    char contract_digest[33];
    char *inventory_file;
    char inventory_digest[33];   /* "" without an inventory */

    struct ka_axis_result axis[KA_AXIS_COUNT];
    enum ka_verdict aggregate;   /* Eq. 3 over the required axes */
    enum ka_verdict certificate; /* aggregate, withheld to INCONCLUSIVE by eligibility (R-B) */
    char *certificate_reason;
    enum ka_weak weak;
    int semantic_supplied;       /* the semantic verdict came from --semantic (a separate run) */
    int semantic_audited;        /* the semantic verdict came from kaudit audit's stress runs */
    char *degenerate_reason;     /* R-B measured by the audit, or NULL */
    char outcome[8];             /* C0, C1, C2, C3a, C3b, C3c, INCONCL; "" without --weak */
    char *outcome_reason;

    struct ka_finding *findings;
    size_t n_findings;

    /* what was read */
    size_t traces, truncated_traces, unreadable_traces;
    uint64_t kernels, vendor_calls, api_records;
    uint64_t kernels_by[KA_ORIGIN_COUNT][KA_PARTY_COUNT];
    uint64_t gpu_ns_by[KA_ORIGIN_COUNT][KA_PARTY_COUNT];
    struct ka_work candidate_work;      /* non-exempt candidate work as estimated */
    struct ka_work reference_work;      /* measured in the reference phase */
    double reference_total;             /* R used by the thresholds */
    int dominant_class;                 /* enum ka_class used by the thresholds, -1 if none */
    int phases_seen;                    /* NVTX phase marks of the contract were found */
    unsigned timed_windows;
    unsigned build_failures;
    unsigned build_processes;           /* compiler, linker and build driver processes of the run */
    double build_wall_s;                /* the union of their lifetimes (-1: none ended in the trace) */
    struct ka_build *builds;            /* the same per build: per working folder, first started first */
    size_t n_builds;
};

/* One build of the run: the build tool processes that ran in one working
 * folder (load_inline's ninja and the compilers it starts there, which
 * inherit it), and the union of their lifetimes. */
#define KA_BUILDS_REPORTED 32   /* analysis.json's read.builds: the first this many */
/* Of one build, one tool by name (nvcc, c++, cicc, ptxas, ld, ...): how many of
 * its processes ran and the union of their lifetimes, the compiler's own wall
 * time.  The KA_BUILD_TOOLS longest are kept, longest first. */
#define KA_BUILD_TOOLS 8
#define KA_BUILD_TOOL_NAME 32
struct ka_build_tool {
    char name[KA_BUILD_TOOL_NAME];
    unsigned processes;
    double wall_s;
};
struct ka_build {
    char *folder;
    unsigned processes;
    double wall_s;
    struct ka_build_tool tools[KA_BUILD_TOOLS];
    unsigned n_tools;           /* kept in tools[] */
    unsigned tools_seen;        /* distinct tool names in the build */
};

/*
 * Analyze the session in dir against contract.  0 on success (*out set, even
 * when the verdicts are INCONCLUSIVE); -1 with err when the session itself
 * cannot be opened.  A trace that does not read is not an error: it makes the
 * affected axes INCONCLUSIVE and is named in the findings.
 */
int ka_analyze(const char *dir, const struct ka_contract *contract, const struct ka_options *opt,
               struct ka_analysis **out, char *err, size_t n);
void ka_analysis_free(struct ka_analysis *a);
/* A guard outside the axes (kaudit audit's stream differential) withholds a
 * PASS certificate: INCONCLUSIVE with why, the outcome INCONCL; the axis
 * verdicts stay (paper 3.5).  Nothing changes unless the certificate is PASS. */
void ka_withhold_certificate(struct ka_analysis *a, const char *why);

/* Reports (report.c). */
#include <stdio.h>
void ka_report_summary(FILE *f, const struct ka_analysis *a);     /* a few lines: axes, certificate, outcome */
/* The outcome code (paper Table 1) of a certificate against one weak decision
 * (ACCEPT or REJECT): C0, C1, C2, C3a, C3b, C3c or INCONCL, with the priority
 * C3b > C3c > C3a > C2 among false accepts; *why (may be NULL) says it. */
const char *ka_outcome_code(enum ka_verdict certificate, enum ka_weak weak, enum ka_verdict implementation,
                            enum ka_verdict measurement, int semantic_signature, const char **why);
void ka_report_text(FILE *f, const struct ka_analysis *a);        /* the explanation, with the evidence */
/* The stable JSON document (docs/report-format.md); NULL on allocation failure. */
char *ka_report_json(const struct ka_analysis *a);

/*
 * Perfetto / Chrome trace JSON timeline (perfetto.c): open, analyze with the
 * sink in opt, close.  Returns 0 or -1 with err.
 */
struct ka_timeline;
struct ka_timeline *ka_timeline_open(const char *path, char *err, size_t n);
void ka_timeline_sink(struct ka_timeline *t, struct ka_options *opt);
int ka_timeline_close(struct ka_timeline *t, char *err, size_t n);

#endif
