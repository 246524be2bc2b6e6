/* contract_new.c - a core-self-implementation contract from a measured reference (contract_new.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "contract.h"
#include "contract_new.h"
#include "audit_exec.h"
#include "safe_file.h"
#include "resources.h"
#include "schedule.h"

/* The "inputs" event of the runner's log, or NULL. */
static cJSON *input_specs(const char *events, char *err, size_t n)
{
    FILE *f = fopen(events, "r");
    if (!f) {
        snprintf(err, n, "cannot read '%s': %s", events, strerror(errno));
        return NULL;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    cJSON *found = NULL;
    while (!found && (len = getline(&line, &cap, f)) > 0) {
        cJSON *e = cJSON_ParseWithLength(line, (size_t)len);
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(e, "event");
        if (cJSON_IsString(ev) && strcmp(ev->valuestring, "inputs") == 0)
            found = cJSON_DetachItemFromObjectCaseSensitive(e, "specs");
        cJSON_Delete(e);
    }
    free(line);
    fclose(f);
    if (!found)
        snprintf(err, n, "'%s' holds no input specs: the reference's get_inputs() did not run (see the runner's log)",
                 events);
    return found;
}

/* "level1/19_ReLU.py" -> "19_ReLU" */
static char *task_name(const char *reference)
{
    const char *base = strrchr(reference, '/');
    base = base ? base + 1 : reference;
    char *name = strdup(base);
    if (name) {
        char *dot = strrchr(name, '.');
        if (dot && dot != name)
            *dot = '\0';
    }
    return name;
}

int contract_new_write(const char *path, const char *manifest, const char *reference, const char *events,
                       const char *candidate_cache, struct ka_contract **out, char *err, size_t n)
{
    cJSON *specs = input_specs(events, err, n);
    if (!specs)
        return -1;
    char *name = task_name(reference);
    char stamp[32];
    time_t t = time(NULL);
    strftime(stamp, sizeof stamp, "%Y-%m-%d", gmtime(&t));
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "kaudit_contract", KA_CONTRACT_VERSION);
    char *id = NULL, *desc = NULL;
    if (asprintf(&id, "generated/%s", name ? name : "task") < 0)
        id = NULL;
    if (asprintf(&desc,
                 "written by kaudit on %s from %s: the candidate must implement the core work itself; "
                 "allocation, memset, copies and layout glue are allowed; the reference's work is measured "
                 "from the reference phase of each recorded session",
                 stamp, reference) < 0)
        desc = NULL;
    cJSON_AddStringToObject(root, "task_id", id ? id : "generated/task");
    cJSON_AddStringToObject(root, "description", desc ? desc : "");
    cJSON *ref = cJSON_AddObjectToObject(root, "reference");
    cJSON_AddStringToObject(ref, "path", reference);
    const char *model[] = { "Model" }, *model_new[] = { "ModelNew" };
    cJSON_AddItemToObject(ref, "symbols", cJSON_CreateStringArray(model, 1));
    cJSON *cand = cJSON_AddObjectToObject(root, "candidate");
    cJSON_AddItemToObject(cand, "symbols", cJSON_CreateStringArray(model_new, 1));
    /* where a candidate's code is built (load_inline, Triton, Inductor):
     * modules loaded from there are the candidate's own code.  The
     * analyzer's defaults, and the cache directories this run uses when the
     * environment moves them (a Triton kernel is loaded by a helper module
     * inside TRITON_CACHE_DIR) */
    size_t n_default;
    const char *const *defaults = ka_default_candidate_objects(&n_default);
    cJSON *objects = cJSON_AddArrayToObject(cand, "objects");
    for (size_t k = 0; k < n_default; k++)
        cJSON_AddItemToArray(objects, cJSON_CreateString(defaults[k]));
    cJSON_AddItemToArray(objects, cJSON_CreateString("*/torch-extensions/*"));
    static const char *const moved[] = { "TORCH_EXTENSIONS_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR" };
    for (size_t k = 0; k < sizeof moved / sizeof moved[0]; k++) {
        char own[PATH_MAX + 32];
        const char *dir = getenv(moved[k]);
        if (candidate_cache) { /* in an audit, the candidate's: the environment names the reference's */
            snprintf(own, sizeof own, "%s%s", candidate_cache, audit_cache_beneath(moved[k]));
            dir = own;
        }
        char real[PATH_MAX], *pattern = NULL;
        /* the store's fixed path exists only inside the worker's namespace: as named */
        if (dir && *dir && asprintf(&pattern, "%s/*", realpath(dir, real) ? real : dir) > 0)
            cJSON_AddItemToArray(objects, cJSON_CreateString(pattern));
        free(pattern);
    }
    cJSON *impl = cJSON_AddObjectToObject(root, "implementation");
    cJSON_AddBoolToObject(impl, "self_implemented", 1);
    cJSON *med = cJSON_AddObjectToObject(impl, "mediators");
    cJSON_AddBoolToObject(med, "allocation", 1);
    cJSON_AddBoolToObject(med, "memset", 1);
    cJSON_AddBoolToObject(med, "copies", 1);
    cJSON_AddBoolToObject(med, "layout_glue", 1);
    cJSON_AddBoolToObject(root, "degenerate_reference", 0);
    cJSON *timing = cJSON_AddObjectToObject(root, "timing");
    cJSON_AddStringToObject(timing, "window", "cuda_events");
    /* the task's precision: the dtype of its first floating input */
    const char *dtype = NULL;
    cJSON *inputs = cJSON_AddArrayToObject(root, "inputs");
    const cJSON *s;
    int i = 0;
    cJSON_ArrayForEach(s, specs)
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(s, "kind");
        if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "tensor") != 0) {
            i++;
            continue;
        }
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(s, "dtype");
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(s, "shape");
        cJSON *in = cJSON_CreateObject();
        char nm[32];
        snprintf(nm, sizeof nm, "input%d", i++);
        cJSON_AddStringToObject(in, "name", nm);
        cJSON_AddItemToObject(in, "shape", cJSON_Duplicate(shape, 1));
        cJSON_AddStringToObject(in, "dtype", cJSON_IsString(dt) ? dt->valuestring : "float32");
        if (!dtype && cJSON_IsString(dt) && strstr(dt->valuestring, "float"))
            dtype = dt->valuestring;
        cJSON_AddItemToArray(inputs, in);
    }
    cJSON_AddStringToObject(timing, "dtype", dtype ? dtype : "float32");
    /* the layouts the task's own get_inputs() makes are the task's: a stress
     * slot of another layout is reported, not gating (docs/audit.md, "What
     * gates"); inputs events written before layouts were logged say none */
    cJSON *layouts = cJSON_CreateArray();
    static const char *const names[] = { "contiguous", "strided", "transposed" };
    for (size_t l = 0; l < sizeof names / sizeof names[0]; l++) {
        int seen = 0;
        cJSON_ArrayForEach(s, specs)
        {
            const cJSON *lay = cJSON_GetObjectItemCaseSensitive(s, "layout");
            seen |= cJSON_IsString(lay) && !strcmp(lay->valuestring, names[l]);
        }
        if (seen)
            cJSON_AddItemToArray(layouts, cJSON_CreateString(names[l]));
    }
    if (cJSON_GetArraySize(layouts) > 0)
        cJSON_AddItemToObject(cJSON_AddObjectToObject(root, "stress"), "layouts", layouts);
    else
        cJSON_Delete(layouts);
    cJSON *work = cJSON_AddObjectToObject(root, "reference_work");
    cJSON_AddStringToObject(work, "measure", "reference_phase");
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    cJSON_Delete(specs);
    free(name);
    free(id);
    free(desc);
    if (!text) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    FILE *f = fopen(path, "w");
    int bad = !f;
    if (f) {
        fputs(text, f);
        fputc('\n', f);
        bad = ferror(f) | (fclose(f) != 0);
    }
    free(text);
    if (bad) {
        snprintf(err, n, "cannot write contract '%s': %s", path, strerror(errno));
        return -1;
    }
    const char *one[] = { path };
    if (ka_manifest_pin(manifest, one, 1, err, n) != 0)
        return -1;
    /* read it back as any contract is read: what we wrote must load */
    struct ka_contract *c;
    if (ka_contract_load(path, manifest, &c, err, n) != 0)
        return -1;
    if (out)
        *out = c;
    else
        ka_contract_free(c);
    return 0;
}

int contract_new_from_reference(const char *reference, const char *path, const char *manifest, const char *python,
                                const char *device, double timeout_s, char *err, size_t n)
{
    char ref[PATH_MAX], runner[PATH_MAX];
    if (!realpath(reference, ref)) {
        snprintf(err, n, "cannot read the reference '%s': %s", reference, strerror(errno));
        return -1;
    }
    if (kres_data_file("runner/kaudit_runner.py", runner, sizeof runner) != 0) {
        snprintf(err, n, "cannot find the runner (runner/kaudit_runner.py under the data directory; set "
                         "KAUDIT_DATA_DIR)");
        return -1;
    }
    char tmp[] = "/tmp/kaudit-contract-XXXXXX";
    if (!mkdtemp(tmp)) {
        snprintf(err, n, "cannot create a temporary directory: %s", strerror(errno));
        return -1;
    }
    char plan_path[PATH_MAX], log[PATH_MAX], events[PATH_MAX];
    snprintf(plan_path, sizeof plan_path, "%s/plan.json", tmp);
    snprintf(log, sizeof log, "%s/worker.log", tmp);
    snprintf(events, sizeof events, "%s/events.jsonl", tmp);
    /* confined as an audit's worker is, to this directory and the caches */
    static struct audit_roots roots;
    const char *task_roots[AUDIT_MAX_ROOTS];
    const char *own[] = { tmp };
    if (audit_roots_for(&roots, own, 1, NULL, 0, err, n) != 0) {
        kat_remove_tree(tmp);
        return -1;
    }
    size_t n_task_roots = audit_python_roots(&roots, 0, task_roots, AUDIT_MAX_ROOTS);
    struct kat_plan plan = { .reference = ref, .candidate = ref, .device = device, .seed = 0, .out_dir = tmp,
                             .work_dir = tmp, .timed_calls = 0, .describe_only = 1, .write_roots = task_roots,
                             .n_write_roots = n_task_roots };
    struct kat_runner_end end;
    int rc = -1;
    if (kat_plan_write(plan_path, &plan, err, n) == 0) {
        struct audit_worker w = { .log_path = log, .work_dir = tmp, .python = python, .runner = runner,
                                  .plan = plan_path, .record = 0, .timeout_s = timeout_s, .roots = &roots,
                                  .tmp_dir = tmp };
        if (audit_exec(&w, &end, err, n) == 0) {
            rc = contract_new_write(path, manifest, ref, events, NULL, NULL, err, n);
            if (rc != 0 && end.timed_out)
                snprintf(err, n, "the reference did not finish get_inputs() within %.0f s", timeout_s);
            else if (rc != 0) {
                /* the runner's own words: its stage error */
                char tail[512] = "";
                FILE *f = fopen(log, "r");
                if (f) {
                    char line[512];
                    while (fgets(line, sizeof line, f))
                        if (strstr(line, "Error") || strstr(line, "error"))
                            snprintf(tail, sizeof tail, "%s", line);
                    fclose(f);
                }
                FILE *e = fopen(events, "r");
                if (e) {
                    char line[2048];
                    while (fgets(line, sizeof line, e))
                        if (strstr(line, "\"status\": \"error\""))
                            snprintf(tail, sizeof tail, "%.500s", line);
                    fclose(e);
                }
                if (tail[0]) {
                    size_t used = strlen(err);
                    snprintf(err + used, n - used, "; the runner said: %s", tail);
                }
            }
        }
    }
    kat_remove_tree(tmp);
    return rc;
}
