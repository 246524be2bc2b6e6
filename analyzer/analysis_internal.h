/*
 * analysis_internal.h - what the stages of the analysis share (private to
 * analyzer/; tools/ and tests use analysis.h only).
 *
 * ka_analyze (analysis.c) is a pipeline; each stage is one file and keeps
 * its own state, and this header declares what passes between them:
 *
 *   index.c           pass 1: one trace into a struct ka_proc (evidence.h)
 *   windows.c         the timed windows, from the event records
 *   stop_bounds.c     stop events without a GPU timestamp, bounded from stream order
 *   origin.c          whose work it is: party, phases, threads, module loaders, origin
 *   work_classes.c    what kind of work it is: the name and operator tables, FLOPs
 *   kernels.c         pass 2: stream the kernels into the tallies
 *   work_items.c      the work items the implementation axis weighs
 *   findings.c        the lines of evidence and their structured fields
 *   verdict_implementation.c, verdict_measurement.c, outcome.c   the rules
 *
 * docs/analysis.md ("Where each rule lives") maps the rules to the files.
 */
#ifndef KAUDIT_ANALYSIS_INTERNAL_H
#define KAUDIT_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "evidence.h"
#include "toolbox.h"
#include "trace_reader.h"

struct kinv_inventory;

/* ---- arrays ------------------------------------------------------------- */

/* Room for one more item in arr (n items, cap of room): 0, or -1 when out of
 * memory with arr unchanged (toolbox.h, kat_grow). */
#define GROW(arr, n, cap) ((n) < (cap) ? 0 : kat_grow(&(arr), &(cap), (n) + 1, sizeof *(arr)))

/*
 * A host-clock time compared with a GPU time is widened by this much (CUPTI
 * converts GPU timestamps to the host clock), so a conversion error never
 * turns into a conviction (stop_bounds.c, verdict_measurement.c).
 */
#define KA_HOST_CLOCK_MARGIN_NS 20000u

/* ---- findings (findings.c) --------------------------------------------- */

struct ka_code_count {
    char code[48];
    unsigned seen;
    size_t summary;             /* 1 + index in a->findings of its findings-not-kept, 0: none */
};

/*
 * A safety bound: at most this many findings of one code are kept (a hostile
 * trace must not make millions of them in memory); the rest are counted
 * (ka_code_seen still sees them all, so no verdict changes) and one finding
 * 'findings-not-kept' says how many of that code were not kept.
 */
#define KA_FINDINGS_KEPT_PER_CODE 10000u

/* The findings of one analysis: up to KA_FINDINGS_KEPT_PER_CODE of each code
 * are kept (the JSON report lists them all; the text report shows
 * KA_FINDINGS_SHOWN per code and a summary). */
struct ka_findings {
    struct ka_analysis *a;              /* appended to a->findings */
    size_t cap_findings;
    struct ka_code_count *codes;
    size_t n_codes, cap_codes;
};

/*
 * Add a finding; returns it, for its fields (ka_field_*), or NULL when out of
 * memory or past KA_FINDINGS_KEPT_PER_CODE of its code.  The pointer is valid until the next ka_add_finding.
 */
struct ka_finding *ka_add_finding(struct ka_findings *f, enum ka_axis axis, enum ka_finding_kind kind,
                                  const char *code, const char *process, uint64_t time_ns, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* Structured fields of a finding (NULL-safe: a failed ka_add_finding needs no check). */
void ka_field_str(struct ka_finding *x, const char *key, const char *value);
void ka_field_u64(struct ka_finding *x, const char *key, uint64_t value);
void ka_field_num(struct ka_finding *x, const char *key, double value);
/* How many findings of code were added. */
unsigned ka_code_seen(const struct ka_findings *f, const char *code);
/* After the last finding: the findings-not-kept summaries get their counts. */
void ka_findings_finish(struct ka_findings *f);
void ka_findings_free(struct ka_findings *f);

/* ---- session facts (gathered by index.c and analysis.c) ------------------ */

/* What a library call computed, to tell two calls apart (the causal probe). */
struct ka_call_shape {
    int64_t m, n, k;
    int32_t type_c;
    uint32_t library;
};

struct ka_span {
    uint64_t start, end;
};

struct ka_proc_summary {
    uint32_t pid, ppid;
    char *argv0, *file;
    uint64_t start_ns;
    int build_tool, status_known;
    int32_t status;
    uint32_t end_kind;
};

struct ka_child_exit {                  /* what a parent's wait() saw */
    uint32_t pid;
    int32_t wait_status;
    char *parent;                       /* the trace that saw it */
};

struct ka_child_start {                 /* a fork or posix_spawn a trace recorded */
    uint32_t pid;
    uint32_t kind;                      /* enum kat_fork_kind */
    char *parent;                       /* the trace that recorded it */
    uint64_t time_ns;
};

/* The root cause of an axis whose session is incomplete (facts.session_incomplete). */
/* The cause for the axes when kaudit run saw the run's processes only through
 * its census (facts.processes_unaccounted) */
#define KA_PROCESSES_UNACCOUNTED_CAUSE                                                                           \
    "kaudit run saw the run's processes only through its 50 ms census (info process_accounting): a process "    \
    "shorter than a scan may have run without a trace unseen"
#define KA_SESSION_INCOMPLETE_CAUSE                                                                              \
    "the session is incomplete: the recording did not end, or a trace was refused (see the findings)"
/* ... and of one whose traces were changed after the run (facts.traces_changed),
 * when no more particular cause (a truncated or missing trace) explains it */
#define KA_TRACES_CHANGED_CAUSE                                                                                   \
    "the traces were changed after the run: info's counts or the vendor call windows disagree with them (see the " \
    "findings)"

/* What the session-level rules read about all the traces together. */
struct ka_session_facts {
    struct ka_span *cand_phases;        /* the candidate's phases, every process */
    size_t n_cand_phases, cap_cand_phases;
    struct ka_proc_summary *procs;
    size_t n_procs, cap_procs;
    struct ka_child_exit *child_exits;  /* from every trace */
    size_t n_child_exits, cap_child_exits;
    struct ka_child_start *child_starts; /* from every trace */
    size_t n_child_starts, cap_child_starts;
    unsigned missing_traces;            /* processes the traces name that have no trace (accounting.c) */
    int processes_unaccounted;          /* kaudit run could not see every process (info process_accounting) */
    uint64_t candidate_modules;         /* modules loaded by candidate objects */
    /* what limits the evidence */
    int health_problem, truncated, read_error;
    int session_incomplete;             /* the recording did not end, or a trace was refused (analysis.c) */
    int traces_changed;                 /* info's counts, or vendor windows, disagree with the traces (analysis.c) */
    unsigned python_off;                /* Python processes without Python-side provenance */
    uint64_t kernels_without_api;
    /* kernels of complete traces whose vendor window names a call with no
     * VENDOR_CALL record: a record was removed (kernels.c) */
    uint64_t windows_without_call, missing_call_example;
    char *missing_call_trace;
    /* the causal probe's baseline replay as the trace shows it (index.c): the
       library calls made in it, by class (not by candidate objects), and its
       calls of each vendor family (enum ka_probe_family) of any caller; exactly
       one window, or nothing is confirmed */
    unsigned probe_windows;
    uint64_t probe_framework_calls[KA_CLASS_COUNT];
    uint64_t probe_vendor_calls[KA_PROBE_FAMILIES];
    /* the shapes of the library calls in the window (the first KA_PROBE_SHAPES): an
       "unused" call elsewhere in the trace must be one of them */
#define KA_PROBE_SHAPES 64
    struct ka_call_shape probe_shapes[KA_PROBE_SHAPES];
    unsigned n_probe_shapes;
    int probe_shapes_overflow;
};

/* ---- work tallies (kernels.c, work_items.c) ------------------------------ */

enum ka_item_kind { KA_ITEM_VENDOR_CALL = 1, KA_ITEM_FRAMEWORK_KERNELS, KA_ITEM_VENDOR_KERNEL };

/* One piece of work the implementation axis weighs. */
struct ka_work_item {
    int cls;
    double work;            /* 0: not estimable */
    int kind;               /* enum ka_item_kind */
    char *what;             /* for the finding */
    char *process;
    uint64_t time_ns;
    int exempt;
    char *exempt_why;
    int unattributed;       /* party unknown: can never convict, can leave the axis unresolved */
    int below_framework;    /* a library call made by a candidate object, not through the framework */
    struct ka_call_shape shape; /* a vendor call's */
    /* for the finding's fields (docs/report-format.md, "Finding fields") */
    int has_call;           /* a vendor call: call_id, api, library, caller, thread, kernels */
    uint64_t call_id;
    char *api;
    const char *library;    /* static (kat_vendor_library_name), or NULL */
    char *caller;
    uint32_t thread;
    uint64_t kernels;       /* kernels in the call's window, or the item's kernel count */
    char *example;          /* a kernel's name (framework and non-mediated items), or NULL */
    char *op;               /* an operator that launched them (framework items), or NULL */
};

struct ka_work_tally {
    struct ka_work_item *items;
    size_t n_items, cap_items;
    uint64_t candidate_kernels_own;     /* candidate-party kernels of candidate origin */
    uint64_t candidate_kernels_own_compute; /* ... of them, of a compute class (not glue): R-A's evidence */
    uint64_t candidate_kernels_any;
    uint64_t candidate_kernels_compute; /* candidate-party kernels of a compute class, any origin */
    /* framework kernels of the candidate, summed per class (proxy: threads launched) */
    double fw_work[KA_CLASS_COUNT];
    uint64_t fw_count[KA_CLASS_COUNT];
    char *fw_example[KA_CLASS_COUNT];
    char *fw_process[KA_CLASS_COUNT];
    char *fw_operator[KA_CLASS_COUNT];  /* an operator that launched them (name and sizes), or NULL */
    /* framework work of the candidate and unknown parties whose class depends on
       what is forbidden (operators.c): resolved by ka_tally_items */
    struct ka_fw_pending {
        int bucket;             /* KA_FW_CANDIDATE or KA_FW_UNKNOWN */
        unsigned mask;          /* the classes its evidence allows */
        int fallback;           /* its class when none of them is forbidden */
        double work;
        uint64_t count;
        char *example, *process, *op;
    } *pending;
    size_t n_pending, cap_pending;
    double unk_fw_work[KA_CLASS_COUNT];
    uint64_t unk_fw_count[KA_CLASS_COUNT];
    /* vendor kernels the candidate launched outside any library call, per class */
    uint64_t nm_count[KA_CLASS_COUNT];
    char *nm_example[KA_CLASS_COUNT];
    char *nm_process[KA_CLASS_COUNT];
    uint64_t nm_time[KA_CLASS_COUNT];
};

/* Vendor calls become work items (outermost calls only). */
void ka_vendor_call_items(struct ka_work_tally *w, struct ka_analysis *a, const struct ka_contract *c,
                          const struct kinv_inventory *inv, const struct ka_proc *p);
/* Framework work of the candidate or unknown party with the classes its evidence allows (kernels.c). */
void ka_tally_pending(struct ka_work_tally *w, int bucket, unsigned mask, int fallback, double work, uint64_t count,
                      const char *example, const char *process, const char *op);
/* After all traces: the pending work takes its class (forbidden: bit set of enum
 * ka_class; dominant, -1 none) and the per-class sums become one item per class. */
void ka_tally_items(struct ka_work_tally *w, unsigned forbidden, int dominant);
void ka_work_tally_free(struct ka_work_tally *w);

/* ---- measurement evidence (kernels.c, verdict_measurement.c) ------------ */

struct ka_timing_facts {
    uint64_t reference_windows_contended; /* the reference's timed windows the candidate's GPU work ran in */
    uint64_t escaped_unattributed;      /* unattributable work past a stop event */
    uint64_t stop_time_ambiguous;       /* kernels between a stop event's bounds */
    uint64_t guard_changes, reported_mismatch, reported_total;
    int tamper;
};

/* ---- the run: every stage's state, owned by ka_analyze ------------------ */

/* An object a build tool of the run wrote (built_objects.c). */
struct ka_built {
    char *path;                 /* the -o argument, made absolute with the tool's working directory;
                                   with folder, the folder a build driver built in */
    char *tool;                 /* the tool's program name */
    uint32_t pid;
    int folder;                 /* 1: objects directly in path are the build's (ninja found them up to date) */
    int noted;                  /* its candidate-object finding is written */
};

/* The candidate's GPU work and the reference's timed windows, across the
 * session's processes (reference_windows.c). */
struct ka_gpu_span {
    uint64_t start_ns, end_ns;
    uint32_t pid;
};

struct ka_reference_window {
    uint64_t lo_ns, hi_ns;      /* what surely holds the window's GPU span */
    int lo_exact, hi_exact;     /* the events' GPU times (no host clock margin needed) */
    uint32_t pid;
    unsigned index;
    float elapsed_ms;
    char *file;
};

struct ka_run {
    struct ka_analysis *a;
    const struct ka_contract *c;
    const struct ka_options *opt;
    struct ka_findings findings;
    struct ka_session_facts facts;
    struct ka_work_tally work;
    struct ka_timing_facts timing;
    struct ka_built *built;
    size_t n_built, cap_built;
    struct ka_gpu_span *candidate_spans;
    size_t n_candidate_spans, cap_candidate_spans;
    struct ka_reference_window *reference_windows;
    size_t n_reference_windows, cap_reference_windows;
    long command_pid;           /* the session's info: the command's own pid, 0 unknown (older sessions) */
    uint64_t weak_requested_ns; /* the runner's "kaudit:weak requested" mark, in its own process; 0 none */
};

/* reference_windows.c: a candidate kernel's GPU interval, kept for the check */
void ka_note_candidate_span(struct ka_run *run, const struct ka_proc *p, uint64_t start_ns, uint64_t end_ns);
/* after p's kernels: its windows that timed the reference's work (and not the candidate's own) */
void ka_note_reference_windows(struct ka_run *run, const struct ka_proc *p);
/* after every process: the candidate's GPU work that ran inside one of them (a finding, and the fact) */
void ka_check_reference_windows(struct ka_run *run);
void ka_reference_windows_free(struct ka_run *run);

struct kat_session;
/* Before the index: what every build tool process of the session wrote (-o). */
void ka_collect_built_objects(struct ka_run *run, const struct kat_session *s);
/* The build that wrote path in this run, when the contract's reference.objects
 * does not claim it (the first ask notes a candidate-object finding); NULL: none. */
const struct ka_built *ka_built_object(struct ka_run *run, const char *path);
void ka_built_objects_free(struct ka_run *run);

/* ---- pass 1: the index (index.c, windows.c) ----------------------------- */

struct ka_timing_rec {
    struct kat_timing_call_rec r;
};

struct ka_event_rec {
    uint32_t correlation_id, stream_id;
    uint64_t device_ts;
};

/* Index one trace into p; the timing calls and CUDA_EVENT records come back for windows and bounds. */
void ka_index_trace(struct ka_run *run, struct kat_trace *t, struct ka_proc *p, struct ka_timing_rec **timing,
                    size_t *n_timing, struct ka_event_rec **events, size_t *n_events);
/* After pass 1: sort, resolve outer calls, parties, timed windows. */
void ka_finish_index(struct ka_run *run, struct ka_proc *p, struct ka_timing_rec *timing, size_t n_timing,
                     struct ka_event_rec *events, size_t n_events);
const struct ka_api *ka_api_of(const struct ka_proc *p, uint32_t correlation_id);
long ka_vcall_find(const struct ka_proc *p, uint64_t id);
void ka_proc_free(struct ka_proc *p);

/* A cudaEventRecord call, for finding the last record of an event before a query. */
struct ka_event_record {
    uint64_t event, enter_ns;
    const struct kat_timing_call_rec *rec;
};
int ka_event_record_cmp(const void *x, const void *y);
/* The last successful record of event at or before t, in recs sorted by (event, time). */
const struct kat_timing_call_rec *ka_last_record_before(const struct ka_event_record *recs, size_t n,
                                                        uint64_t event, uint64_t t);
/* The timed windows of p from its timing calls and events (windows.c). */
void ka_build_windows(struct ka_run *run, struct ka_proc *p, struct ka_timing_rec *timing, size_t n_timing,
                      struct ka_event_rec *events, size_t n_events);
/* The window a launch at host time t belongs to (its start record <= t < its end record). */
struct ka_window *ka_window_at(struct ka_proc *p, uint64_t t);
/* party as its phase at t names it, but a reference phase in a process that is
 * not the reference's (ka_options.reference_process) outside the weak
 * surfaces' phase: the candidate's */
enum ka_party ka_trusted_party(const struct ka_proc *p, enum ka_party party, uint64_t t);
/* party, but a launch of class cls (a family the party's harness never runs:
 * GEMM, convolution, attention, normalization, softmax, pooling) outside
 * every phase of a process not the reference's, outside the weak surfaces'
 * phase: the candidate's (a thread whose creation went untraced, a harness
 * function it patched, a process it started) */
enum ka_party ka_unphased_compute(const struct ka_proc *p, enum ka_party party, int cls, uint64_t t);

/* Stop-event bounds from stream order (stop_bounds.c). */
void ka_bound_stop_events(struct kat_trace *t, struct ka_proc *p, const struct ka_timing_rec *timing,
                          size_t n_timing);

/* ---- whose work (origin.c) ---------------------------------------------- */

int ka_path_matches(const char *path, char *const *patterns, size_t n);
int ka_is_candidate_object(const struct ka_contract *c, const char *path);
int ka_is_framework_object(const char *path);
int ka_loader_kind(const struct ka_contract *c, const char *loader);
int ka_is_build_tool(const char *argv0, const char *exe);
enum ka_party ka_phase_party(const struct ka_contract *c, const char *message, int python);
enum ka_party ka_party_of_launch(const struct ka_proc *p, uint32_t tid, uint64_t t, int *via_thread,
                                 uint64_t *thread_created_ns);
const struct ka_thread_origin *ka_thread_origin(const struct ka_proc *p, uint32_t tid);
const struct ka_module *ka_module_loaded_during(const struct ka_proc *p, uint32_t tid, uint64_t s, uint64_t e);
/* The module tid loaded explicitly just before a launch at s (no launch call in between), NULL if none. */
const struct ka_module *ka_module_loaded_before(const struct ka_proc *p, uint32_t tid, uint64_t s);
/* What the trace shows about one kernel launch, for its origin. */
struct ka_kernel_facts {
    const char *name;
    size_t name_len;
    int name_match;                 /* enum kinv_strength: how the inventory knows its name (cached per name) */
    const struct ka_vcall *vcall;   /* the outermost vendor call whose window it is in, NULL if none */
    const struct ka_module *module; /* the module its launch loaded, NULL if unknown */
    int framework_name;             /* PyTorch's own code by its name */
    uint8_t *name_verdict;          /* the name's verdict without window and module, kept per name (0: not yet) */
};
struct ka_kernel_attribution {
    enum ka_origin origin;
    enum ka_party party;            /* in: the launch's party; out: the candidate's when its module is */
    int impersonation;              /* candidate code under a name the inventory knows: flagged */
    int digest_vendor;              /* vendor by its module's bytes (a vendor cubin the inventory knows) */
    int verdict;                    /* enum kinv_verdict of the attribution rule */
    const char *reason;             /* ... and its one line, static */
};
/* The origin of a kernel of process p: kinv_attribute's verdict, then framework and phase (origin.c). */
void ka_kernel_origin(const struct kinv_inventory *inv, const struct ka_proc *p, const struct ka_kernel_facts *f,
                      struct ka_kernel_attribution *out);
/* Is the library behind a vendor call pinned by the inventory: 1, 0, or -1 without an inventory. */
int ka_library_pinned(const struct kinv_inventory *inv, const struct ka_proc *p, uint32_t library);
void ka_python_provenance_finding(struct ka_findings *f, struct ka_session_facts *s, struct ka_proc *p,
                                  const char *argv0, const char *exe);

/* ---- which operator launched it (operators.c) ---------------------------- */

/* Keep an operator range opened at t on tid in party's phase; its index, -1 when out of memory. */
int32_t ka_operator_open(struct ka_proc *p, uint32_t tid, uint32_t message, int cls, enum ka_party party,
                         int32_t parent, uint64_t t);
/* After pass 1: order the operators for ka_operator_at. */
void ka_operators_finish(struct ka_proc *p);
/* The innermost operator open on tid at t, NULL if none. */
const struct ka_operator *ka_operator_at(const struct ka_proc *p, uint32_t tid, uint64_t t);

/* Framework work by party: the candidate's items, the unknown party's, the reference's R. */
enum { KA_FW_CANDIDATE = 0, KA_FW_UNKNOWN = 1, KA_FW_REFERENCE = 2, KA_FW_BUCKETS = 3 };
/* The operator classes seen for one kernel name, by the party whose phase the range opened in. */
struct ka_operator_evidence {
    uint16_t learned[KA_FW_BUCKETS];    /* bit set of enum ka_class */
    uint32_t message[KA_FW_BUCKETS];    /* a range's message (trace string id), 0 none */
};
void ka_operator_learn(struct ka_operator_evidence *e, int bucket, const struct ka_operator *op);
/* The class the reference's launches of a name count in. */
int ka_operator_reference_class(const struct ka_operator_evidence *e, int name_cls, int strength);
/* The classes the evidence allows a candidate or unknown launch (bit set); *fallback the one without a forbidden one. */
unsigned ka_operator_classes(const struct ka_operator_evidence *e, int bucket, int name_cls, int strength,
                             int *fallback);
/* The class counted: the dominant class if allowed, else a forbidden one, else the fallback. */
int ka_choose_class(unsigned mask, int fallback, unsigned forbidden, int dominant);

/* ---- what kind of work (work_classes.c) ---------------------------------- */

int ka_class_of_kernel_name(const char *name);
/* How much a kernel's name says of its class (ka_kernel_name_class). */
enum { KA_NAME_UNKNOWN = 0, KA_NAME_GENERIC = 1, KA_NAME_SPECIFIC = 2 };
int ka_kernel_name_class(const char *name, int *strength);
/* The class of an NVTX operator range ("aten::topk, ..."), -1 for no family or no operator. */
int ka_class_of_operator(const char *message);
int ka_is_operator_message(const char *message);
/* An operator range's message for people: its name and sizes, without ids. */
void ka_operator_label(const char *message, char *buf, size_t n);
/* The class a framework kernel counts in, from its name's class and strength and its operator's class. */
int ka_refine_class(int name_cls, int name_strength, int op_cls);
/* Every operator name of the families, with its class; prefix: the name is a prefix. */
void ka_operator_family_each(void (*fn)(void *arg, int cls, const char *name, int prefix), void *arg);
int ka_is_framework_kernel_name(const char *name);
int ka_is_low_precision_name(const char *name);
/* FLOPs of a vendor call from its argument summary (0 when not estimable); *cls its class. */
double ka_vendor_call_work(const struct kat_vendor_call_rec *r, const char *api, int *cls);

/* ---- pass 2 (kernels.c) and the per-kernel measurement rule ------------- */

void ka_stream_kernels(struct ka_run *run, struct kat_trace *t, struct ka_proc *p);

/* One kernel of a known party as the measurement rule sees it (verdict_measurement.c). */
struct ka_kernel_timing {
    const char *name;
    const struct kat_kernel_rec *k;
    enum ka_party party;
    int via_thread;         /* belongs to the window its launching thread was created in */
};
void ka_check_kernel_window(struct ka_findings *f, struct ka_timing_facts *tf, const struct ka_proc *p,
                            struct ka_window *w, const struct ka_kernel_timing *kt);
/* After pass 2 of a trace: windows whose reported time is shorter than the
 * candidate work launched inside them (reported-time-shorter-than-work). */
void ka_check_window_work(struct ka_findings *f, const struct ka_proc *p);
void ka_window_work_free(struct ka_window *w);

/* ---- the rules ----------------------------------------------------------- */

void ka_timing_integrity(struct ka_findings *f, struct ka_timing_facts *tf, const struct ka_proc *p);
void ka_measurement_signals(struct ka_findings *f, const struct ka_contract *c, const struct ka_proc *p);
/* Every process the traces name (a fork, a spawn, a reaped child) must have a
 * trace of its own; one that has none makes the session incomplete
 * (accounting.c). */
void ka_account_processes(struct ka_findings *f, struct ka_session_facts *fs);
void ka_build_failures(struct ka_findings *f, const struct ka_session_facts *s, struct ka_analysis *a);
void ka_implementation_verdict(struct ka_findings *f, struct ka_work_tally *w, const struct ka_session_facts *s,
                               const struct ka_contract *c, const struct ka_probe_evidence *probe,
                               const struct ka_semantic_evidence *sem, struct ka_analysis *a);
/* The causal probe (probe.c): does it reach this work item; its fields on a finding; its verdict without traces. */
enum { KA_PROBE_DISPATCHER = 1, KA_PROBE_VENDOR = 2 };
/* 0, or the channel that reached it (KA_PROBE_*) with the output's change in
 * *change; for the vendor channel, *vendor_level says which of its replays
 * decided: "call", "family" or "every-library-call" (NULL otherwise). */
int ka_probe_reaches(const struct ka_probe_evidence *pr, const struct ka_work_item *it, double *change,
                     const char **vendor_level);
/* The vendor channel's family of a library call item (enum ka_probe_family; NONE:
 * not a call the channel replaces). */
int ka_probe_vendor_family(const struct ka_work_item *it);
void ka_probe_fields(struct ka_finding *x, const struct ka_probe_evidence *pr, int cls);
/* 1 when the probe's replays may clear work: decided, on a baseline that matched the reference. */
int ka_probe_vouches(const struct ka_probe_evidence *pr);
/* A baseline that differs from the reference where the semantic axis PASSed: the
 * finding probe-baseline-mismatch and the implementation axis FAIL; returns 1 then,
 * 0 otherwise (a signal of that name when the semantic axis did not PASS). */
int ka_probe_baseline_convicts(struct ka_findings *f, const struct ka_probe_evidence *pr,
                               const struct ka_semantic_evidence *sem, struct ka_analysis *a);
void ka_probe_only_verdict(struct ka_findings *f, const struct ka_probe_evidence *pr, const struct ka_contract *c,
                           const struct ka_semantic_evidence *sem, struct ka_analysis *a);
void ka_measurement_verdict(const struct ka_findings *f, const struct ka_timing_facts *tf,
                            const struct ka_session_facts *s, const struct ka_work_tally *w,
                            const struct ka_contract *c, struct ka_analysis *a);
/* The semantic axis, the certificate and the outcome code (outcome.c). */
void ka_aggregate(struct ka_findings *f, const struct ka_options *opt, const struct ka_contract *c,
                  struct ka_analysis *a);

#endif
