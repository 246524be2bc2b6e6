/*
 * names.c - the names of analysis.h's enums (verdicts, axes, parties,
 * origins, finding kinds) as the reports print them.  Apart from the driver
 * (analysis.c) because the stages and the reports use them.
 */
#include "analysis.h"

const char *ka_verdict_name(enum ka_verdict v)
{
    static const char *const names[] = { "PASS", "FAIL", "INCONCLUSIVE", "UNSUPPORTED" };
    return (unsigned)v < 4 ? names[v] : "?";
}

const char *ka_certificate_name(enum ka_verdict v)
{
    return v == KA_INCONCLUSIVE ? "INCONCL" : ka_verdict_name(v);
}

const char *ka_axis_name(enum ka_axis a)
{
    static const char *const names[] = { "semantic", "implementation", "measurement" };
    return (unsigned)a < KA_AXIS_COUNT ? names[a] : "?";
}

const char *ka_party_name(enum ka_party p)
{
    static const char *const names[] = { "unknown", "candidate", "reference", "harness" };
    return (unsigned)p < KA_PARTY_COUNT ? names[p] : "?";
}

const char *ka_origin_name(enum ka_origin o)
{
    static const char *const names[] = { "vendor", "framework", "candidate", "unattributed" };
    return (unsigned)o < KA_ORIGIN_COUNT ? names[o] : "?";
}

const char *ka_finding_kind_name(enum ka_finding_kind k)
{
    switch (k) {
    case KA_FINDING_CONVICTS: return "convicts";
    case KA_FINDING_UNRESOLVED: return "unresolved";
    case KA_FINDING_SIGNAL: return "signal";
    case KA_FINDING_SUPPORT: return "support";
    }
    return "?";
}
