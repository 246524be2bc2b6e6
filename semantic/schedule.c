/* schedule.c - the sixteen slots and the plan file (schedule.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json_writer.h"
#include "schedule.h"

/* The scales span the paper's 1e-4 to 1e5; the layouts exercise the strides a
 * kernel that assumes contiguity gets wrong; repeated_calls exercises caches
 * keyed on pointers or shapes, class-level state and output aliasing. */
const struct kat_slot kat_schedule[KAT_SCHEDULE_SLOTS] = {
    { "value_normal", KAT_SLOT_VALUE, "normal", 1.0, NULL, 0, NULL },
    { "value_tiny", KAT_SLOT_VALUE, "normal", 1e-4, NULL, 0, NULL },
    { "value_large", KAT_SLOT_VALUE, "normal", 1e5, NULL, 0, NULL },
    { "dist_uniform", KAT_SLOT_VALUE, "uniform", 1.0, NULL, 0, NULL },
    { "dist_heavy_tailed", KAT_SLOT_VALUE, "heavy_tailed", 1.0, NULL, 0, NULL },
    { "dist_sparse", KAT_SLOT_VALUE, "sparse", 1.0, NULL, 0, NULL },
    { "dist_constant", KAT_SLOT_VALUE, "constant", 1.0, NULL, 0, NULL },
    { "dist_signed_extremes", KAT_SLOT_VALUE, "signed_extremes", 1.0, NULL, 0, NULL },
    { "layout_strided", KAT_SLOT_LAYOUT, NULL, 1.0, "strided", 0, NULL },
    { "layout_transposed", KAT_SLOT_LAYOUT, NULL, 1.0, "transposed", 0, NULL },
    { "shape_alternative", KAT_SLOT_SHAPE, NULL, 1.0, NULL, 0, NULL },
    { "repeated_calls", KAT_SLOT_REPEATED, NULL, 1.0, NULL, 0, NULL },
    { "native_seed_0", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 0, NULL },
    { "native_seed_1", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 1, NULL },
    { "native_seed_2", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 2, NULL },
    { "native_seed_3", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 3, NULL },
};

const struct kat_slot kat_schedule_spares[KAT_SCHEDULE_SPARES] = {
    { "native_seed_4", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 4, NULL },
    { "native_seed_5", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 5, NULL },
    { "native_seed_6", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 6, NULL },
    { "native_seed_7", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 7, NULL },
    { "native_seed_8", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 8, NULL },
    { "native_seed_9", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 9, NULL },
    { "native_seed_10", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 10, NULL },
    { "native_seed_11", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 11, NULL },
};

const struct kat_slot kat_schedule_reserves[KAT_SCHEDULE_RESERVES] = {
    { "native_seed_12", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 12, NULL },
    { "native_seed_13", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 13, NULL },
    { "native_seed_14", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 14, NULL },
    { "native_seed_15", KAT_SLOT_NATIVE, NULL, 1.0, NULL, 15, NULL },
};

const struct kat_slot kat_schedule_shape_probes[KAT_SCHEDULE_SHAPE_PROBES] = {
    { "shape_odd_sizes", KAT_SLOT_SHAPE_PROBE, NULL, 1.0, NULL, 0, "odd_sizes" },
    { "shape_batch", KAT_SLOT_SHAPE_PROBE, NULL, 1.0, NULL, 0, "batch" },
};

const char *kat_slot_kind_name(enum kat_slot_kind k)
{
    switch (k) {
    case KAT_SLOT_VALUE: return "value";
    case KAT_SLOT_LAYOUT: return "layout";
    case KAT_SLOT_SHAPE: return "shape";
    case KAT_SLOT_REPEATED: return "repeated";
    case KAT_SLOT_NATIVE: return "native";
    case KAT_SLOT_SHAPE_PROBE: return "shape_probe";
    }
    return "?";
}

unsigned kat_slot_transform(const struct kat_slot *s)
{
    if (s->kind != KAT_SLOT_LAYOUT || !s->layout)
        return 0;
    return !strcmp(s->layout, "strided") ? KAT_TRANSFORM_STRIDED : KAT_TRANSFORM_TRANSPOSED;
}

static const struct {
    const char *name;
    unsigned bits;
} transforms[] = { { "layouts", KAT_TRANSFORM_LAYOUTS },
                   { "strided", KAT_TRANSFORM_STRIDED },
                   { "transposed", KAT_TRANSFORM_TRANSPOSED },
                   { "shapes", KAT_TRANSFORM_SHAPES } };

const char *kat_reported_code(const char *slot_name, char *buf, size_t n)
{
    snprintf(buf, n, "%s", slot_name ? slot_name : "");
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = '-';
    return buf;
}

int kat_transforms_parse(const char *list, unsigned *bits, char *bad, size_t n)
{
    *bits = 0;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        unsigned b = 0;
        for (size_t i = 0; i < sizeof transforms / sizeof transforms[0]; i++)
            if (strlen(transforms[i].name) == len && !strncmp(p, transforms[i].name, len))
                b = transforms[i].bits;
        if (!b) {
            snprintf(bad, n, "%.*s", (int)len, p);
            return -1;
        }
        *bits |= b;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

const char *kat_transforms_name(unsigned bits, char *buf, size_t n)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = { { KAT_TRANSFORM_STRIDED, "strided" },
                  { KAT_TRANSFORM_TRANSPOSED, "transposed" },
                  { KAT_TRANSFORM_SHAPES, "shapes" } };
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((bits & names[i].bit) && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "", names[i].name);
    if (!bits)
        snprintf(buf, n, "none");
    return buf;
}

static int slot_gates(const struct kat_plan *p, const struct kat_slot *s)
{
    unsigned t = kat_slot_transform(s);
    return !t || (p->gated_transforms & t);
}

/* replaces: the fixed slot a native seed stands in for (NULL: none) */
static void write_slot(struct kat_json *j, const struct kat_slot *s, int index, const char *replaces)
{
    kat_json_open_line(j, '{');
    if (index >= 0)
        kat_json_i64(j, "index", index);
    kat_json_str(j, "name", s->name);
    kat_json_str(j, "kind", kat_slot_kind_name(s->kind));
    if (s->dist)
        kat_json_str(j, "dist", s->dist);
    if (s->kind == KAT_SLOT_VALUE)
        kat_json_double(j, "scale", s->scale);
    if (s->layout)
        kat_json_str(j, "layout", s->layout);
    if (s->kind == KAT_SLOT_NATIVE)
        kat_json_u64(j, "seed_offset", s->seed_offset);
    if (s->variant)
        kat_json_str(j, "variant", s->variant);
    if (replaces) {
        kat_json_str(j, "replaces", replaces);
        kat_json_str(j, "replaced_because", "the contract does not declare this input transformation valid: it "
                                            "is run as a reported slot, not gating (policy contract-supported)");
    }
    kat_json_close(j, '}');
}

int kat_plan_write(const char *path, const struct kat_plan *p, char *err, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, n, "cannot write plan '%s': %s", path, strerror(errno));
        return -1;
    }
    struct kat_json j;
    kat_json_init(&j, f);
    kat_json_open(&j, NULL, '{');
    kat_json_u64(&j, "kaudit_plan", 1);
    kat_json_str(&j, "reference", p->reference);
    kat_json_str(&j, "candidate", p->candidate);
    kat_json_str(&j, "device", p->device);
    kat_json_u64(&j, "seed", p->seed);
    kat_json_str(&j, "out_dir", p->out_dir);
    kat_json_str(&j, "work_dir", p->work_dir);
    kat_json_u64(&j, "timed_calls", p->timed_calls);
    kat_json_bool(&j, "timing", p->timing);
    /* concurrent audits' timed phases take turns per device (docs/timing.md, "Concurrent audits") */
    if (p->timing_lock_dir) {
        kat_json_str(&j, "timing_lock_dir", p->timing_lock_dir);
        kat_json_bool(&j, "timing_turns", p->timing_turns);
        kat_json_double(&j, "timing_lock_wait_s", p->timing_lock_wait_s);
    } else {
        kat_json_null(&j, "timing_lock_dir");
    }
    kat_json_bool(&j, "describe_only", p->describe_only);
    kat_json_open(&j, "write_roots", '[');
    for (size_t i = 0; i < p->n_write_roots; i++)
        kat_json_str(&j, NULL, p->write_roots[i]);
    kat_json_close(&j, ']');
    /* a fixed slot that does not gate: the next spare stands in for it */
    int spare = 0;
    kat_json_open(&j, "slots", '[');
    for (int i = 0; i < KAT_SCHEDULE_SLOTS; i++) {
        if (slot_gates(p, &kat_schedule[i]))
            write_slot(&j, &kat_schedule[i], i, NULL);
        else
            write_slot(&j, &kat_schedule_spares[spare++], i, kat_schedule[i].name);
    }
    kat_json_close(&j, ']');
    kat_json_open(&j, "spares", '[');
    for (int i = spare; i < KAT_SCHEDULE_SPARES; i++)
        write_slot(&j, &kat_schedule_spares[i], -1, NULL);
    kat_json_close(&j, ']');
    kat_json_open(&j, "reserves", '[');
    for (int i = 0; i < KAT_SCHEDULE_RESERVES; i++)
        write_slot(&j, &kat_schedule_reserves[i], -1, NULL);
    kat_json_close(&j, ']');
    /* run after the reserves, judged; a reported slot of a transformation
       that gates (the shape probes under --require shapes) is marked so */
    kat_json_open(&j, "reported", '[');
    for (int i = 0; i < KAT_SCHEDULE_SLOTS; i++)
        if (!slot_gates(p, &kat_schedule[i]))
            write_slot(&j, &kat_schedule[i], -1, NULL);
    for (int i = 0; i < KAT_SCHEDULE_SHAPE_PROBES; i++) {
        if (p->gated_transforms & KAT_TRANSFORM_SHAPES) {
            kat_json_open_line(&j, '{');
            kat_json_str(&j, "name", kat_schedule_shape_probes[i].name);
            kat_json_str(&j, "kind", kat_slot_kind_name(kat_schedule_shape_probes[i].kind));
            kat_json_str(&j, "variant", kat_schedule_shape_probes[i].variant);
            kat_json_bool(&j, "gating", 1);
            kat_json_close(&j, '}');
        } else {
            write_slot(&j, &kat_schedule_shape_probes[i], -1, NULL);
        }
    }
    kat_json_close(&j, ']');
    /* The long run: that many calls of the candidate's instance A after the slots. */
    if (p->long_run_calls) {
        kat_json_open(&j, "long_run", '{');
        kat_json_u64(&j, "calls", p->long_run_calls);
        kat_json_close(&j, '}');
    } else {
        kat_json_null(&j, "long_run");
    }
    /* The train_mode slot, where the reference's output depends on its mode. */
    kat_json_bool(&j, "modes", p->modes);
    /* The state_reload slot: a second state loaded into the candidate after its calls. */
    kat_json_bool(&j, "state_reload", p->state_reload);
    /* The contract's alternative shapes, JSON already (the contract parser checked them). */
    if (p->alternative_shapes)
        kat_json_raw(&j, "alternative_shapes", p->alternative_shapes);
    else
        kat_json_null(&j, "alternative_shapes");
    /* The state the contract lets the candidate hold that the reference lacks. */
    if (p->candidate_only_state)
        kat_json_raw(&j, "candidate_only_state", p->candidate_only_state);
    else
        kat_json_null(&j, "candidate_only_state");
    /* The causal probe (docs/audit.md, "Causal probe"): what to perturb; null: no probe. */
    if (p->probe) {
        kat_json_open(&j, "probe", '{');
        kat_json_u64(&j, "seed", p->seed);
        kat_json_raw(&j, "targets", p->probe);
        kat_json_close(&j, '}');
    } else {
        kat_json_null(&j, "probe");
    }
    /* The weak surfaces (docs/validators.md, "Weak surfaces"), run after the audit's work. */
    kat_json_raw(&j, "weak_surfaces", p->weak_surfaces ? p->weak_surfaces : "[]");
    /* The candidate's own process (docs/audit.md, "Two parties, two processes"). */
    if (p->party)
        kat_json_raw(&j, "party", p->party);
    else
        kat_json_null(&j, "party");
    kat_json_close(&j, '}');
    fputc('\n', f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, n, "cannot write plan '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
