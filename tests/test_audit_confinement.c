/* A PASS certificate needs every confinement mechanism in force
 * (audit/audit_exec.h, audit_confinement_complete). */
#include <criterion/criterion.h>
#include <string.h>

#include "audit_exec.h"

static const struct audit_confinement landlock = { .confined = 1, .abi = 7 };

Test(audit_confinement, complete_with_landlock_and_a_read_only_session)
{
    char why[256] = "";
    cr_assert_eq(audit_confinement_complete(&landlock, "read-only (mount namespace)", why, sizeof why), 1);
}

Test(audit_confinement, incomplete_without_landlock_names_it)
{
    struct audit_confinement none = { .confined = 0, .why = "the kernel has no Landlock (ENOSYS)" };
    char why[256] = "";
    cr_assert_eq(audit_confinement_complete(&none, "read-only (mount namespace)", why, sizeof why), 0);
    cr_assert(strstr(why, "confinement-incomplete") && strstr(why, "no Landlock"), "%s", why);
}

Test(audit_confinement, incomplete_when_the_session_protection_is_unknown_or_writable)
{
    struct audit_confinement unknown = { .confined = -1, .why = "unknown: the session's info does not say" };
    char why[256] = "";
    cr_assert_eq(audit_confinement_complete(&unknown, "read-only", why, sizeof why), 0);
    cr_assert_eq(audit_confinement_complete(&landlock, "none: cannot make a mount namespace (EPERM)", why,
                                            sizeof why), 0);
    cr_assert(strstr(why, "not read-only") && strstr(why, "EPERM"), "%s", why);
    cr_assert_eq(audit_confinement_complete(&landlock, NULL, why, sizeof why), 0);
    cr_assert_eq(audit_confinement_complete(&landlock, "", why, sizeof why), 0);
}
