/*
 * attribution.c - the name-collision rule (docs/inventory.md, "Name
 * collisions"): a name match never makes a launch vendor work by itself.
 * Vendor work needs origin evidence (the module's bytes are a cubin of a
 * vendor library, the module was loaded by a vendor library, or the launch
 * happened inside a vendor call window) and the library behind that
 * evidence must be one the inventory pins by digest.  The candidate's own
 * module means candidate work, unless its bytes are a vendor cubin; under a
 * vendor name it is flagged as impersonation.
 */
#include "internal.h"

int kinv_library_pinned(const struct kinv_inventory *inv, const uint8_t *digest)
{
    if (!inv || !digest)
        return 0;
    for (size_t i = 0; i < inv->n_libs; i++)
        if (!memcmp(inv->libs[i].digest, digest, 16))
            return 1;
    return 0;
}

/* The library behind the evidence is pinned; without an inventory there is nothing to pin against. */
static int pinned(const struct kinv_inventory *inv, const uint8_t *digest)
{
    return !inv || kinv_library_pinned(inv, digest);
}

const char *kinv_verdict_name(enum kinv_verdict v)
{
    switch (v) {
    case KINV_VERDICT_VENDOR: return "vendor";
    case KINV_VERDICT_VENDOR_UNPINNED: return "vendor-unpinned";
    case KINV_VERDICT_CANDIDATE: return "candidate";
    case KINV_VERDICT_IMPERSONATION: return "impersonation";
    case KINV_VERDICT_NAME_ONLY: return "name-only";
    case KINV_VERDICT_UNATTRIBUTED: return "unattributed";
    case KINV_VERDICT_CONFLICT: return "conflict";
    }
    return "?";
}

static void set(struct kinv_attribution *out, enum kinv_verdict v, const char *reason)
{
    out->verdict = v;
    out->counts_as_vendor_work = v == KINV_VERDICT_VENDOR;
    out->reason = reason;
}

void kinv_attribute(const struct kinv_inventory *inv, const struct kinv_launch_facts *f,
                    struct kinv_attribution *out)
{
    /* Without an inventory nothing matches and nothing can be pinned: the
       origin evidence stands as the trace shows it (see pinned below). */
    struct kinv_match m = { .strength = KINV_MATCH_NONE };
    if (f->name_match)
        m = *f->name_match;
    else if (inv)
        kinv_match(inv, f->name, f->name_len, &m);
    out->name_match = m.strength;
    int named = m.strength != KINV_MATCH_NONE;

    /* The module's bytes are a cubin of a pinned vendor library: vendor code,
       whoever loaded it.  A candidate that loads it itself delegates to the
       vendor; it does not impersonate it. */
    const struct kinv_module *mod;
    if (inv && f->module_digest && kinv_lookup_module(inv, f->module_digest, &mod)) {
        set(out, KINV_VERDICT_VENDOR, f->module_origin == KINV_MODULE_CANDIDATE
            ? "module bytes are a cubin of a pinned vendor library, loaded by the candidate"
            : "module bytes are a cubin of a pinned vendor library");
        return;
    }

    switch (f->module_origin) {
    case KINV_MODULE_CANDIDATE:
        /* The function's own module is the most specific evidence there is:
           a window around it (the candidate interposing a vendor entry
           point, say) does not make it vendor code. */
        if (named)
            set(out, KINV_VERDICT_IMPERSONATION,
                "vendor kernel name defined in the candidate's own module");
        else
            set(out, KINV_VERDICT_CANDIDATE, "kernel from the candidate's own module");
        return;
    case KINV_MODULE_VENDOR:
        if (pinned(inv, f->module_library_digest))
            set(out, KINV_VERDICT_VENDOR, f->in_vendor_window
                ? "module loaded by a pinned vendor library, launched inside a vendor call window"
                : "module loaded by a pinned vendor library");
        else
            set(out, KINV_VERDICT_VENDOR_UNPINNED,
                "module loaded by a vendor library whose digest the inventory does not pin");
        return;
    case KINV_MODULE_OTHER:
        if (f->in_vendor_window)
            set(out, KINV_VERDICT_CONFLICT,
                "launched inside a vendor call window from a module of another library");
        else if (named)
            set(out, KINV_VERDICT_NAME_ONLY,
                "vendor-like name in another library's module, no vendor origin evidence");
        else
            set(out, KINV_VERDICT_UNATTRIBUTED, "module of another library, outside vendor windows");
        return;
    case KINV_MODULE_UNKNOWN:
    default:
        if (f->in_vendor_window) {
            if (pinned(inv, f->window_library_digest))
                set(out, KINV_VERDICT_VENDOR, named
                    ? "launched inside a call window of a pinned vendor library"
                    : "launched inside a call window of a pinned vendor library (name not in the inventory)");
            else
                set(out, KINV_VERDICT_VENDOR_UNPINNED,
                    "launched inside a vendor call window of a library the inventory does not pin");
        } else if (named) {
            set(out, KINV_VERDICT_NAME_ONLY, "vendor name without origin evidence");
        } else {
            set(out, KINV_VERDICT_UNATTRIBUTED, "no vendor name and no origin evidence");
        }
        return;
    }
}
