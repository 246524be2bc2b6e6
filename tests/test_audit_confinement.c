/* A PASS certificate needs every confinement mechanism in force
 * (audit/audit_exec.h, audit_confinement_complete). */
#include <criterion/criterion.h>
#include <string.h>

#include "audit_exec.h"

static const struct audit_confinement landlock = { .confined = 1, .abi = 7 };
#define UNPRIVILEGED "unprivileged: uid 1073741901 gid 1073741901, no effective, permitted or ambient capability"

Test(audit_confinement, complete_with_landlock_and_a_read_only_session)
{
    char why[256] = "";
    cr_assert_eq(audit_confinement_complete(&landlock, "read-only (mount namespace)", UNPRIVILEGED, why, sizeof why), 1);
}

Test(audit_confinement, incomplete_without_landlock_names_it)
{
    struct audit_confinement none = { .confined = 0, .why = "the kernel has no Landlock (ENOSYS)" };
    char why[256] = "";
    cr_assert_eq(audit_confinement_complete(&none, "read-only (mount namespace)", UNPRIVILEGED, why, sizeof why), 0);
    cr_assert(strstr(why, "confinement-incomplete") && strstr(why, "no Landlock"), "%s", why);
}

Test(audit_confinement, incomplete_when_the_session_protection_is_unknown_or_writable)
{
    struct audit_confinement unknown = { .confined = -1, .why = "unknown: the session's info does not say" };
    char why[256] = "";
    cr_assert_eq(audit_confinement_complete(&unknown, "read-only", UNPRIVILEGED, why, sizeof why), 0);
    cr_assert_eq(audit_confinement_complete(&landlock, "none: cannot make a mount namespace (EPERM)", UNPRIVILEGED,
                                            why, sizeof why), 0);
    cr_assert(strstr(why, "not read-only") && strstr(why, "EPERM"), "%s", why);
    cr_assert_eq(audit_confinement_complete(&landlock, NULL, UNPRIVILEGED, why, sizeof why), 0);
    cr_assert_eq(audit_confinement_complete(&landlock, "", UNPRIVILEGED, why, sizeof why), 0);
}

Test(audit_confinement, incomplete_when_the_worker_kept_privileges_or_they_are_unknown)
{
    char why[256] = "";
    cr_assert_eq(audit_confinement_complete(&landlock, "read-only", "privileged: uid 0, effective 000001ffffffffff",
                                            why, sizeof why), 0);
    cr_assert(strstr(why, "confinement-incomplete") && strstr(why, "privileged: uid 0"), "%s", why);
    cr_assert_eq(audit_confinement_complete(&landlock, "read-only", "kept: the worker's uid 5 cannot read /root/x",
                                            why, sizeof why), 0);
    cr_assert(strstr(why, "/root/x"), "%s", why);
    cr_assert_eq(audit_confinement_complete(&landlock, "read-only", NULL, why, sizeof why), 0);
}
