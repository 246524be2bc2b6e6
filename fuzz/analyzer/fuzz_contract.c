/*
 * fuzz_contract.c - the contract parser (ka_contract_parse) on arbitrary
 * bytes.  A contract it accepts must be usable: it is then run against a
 * fixed synthetic session (synth_traces.c: phases, vendor calls, timed
 * windows, a build tool, a truncated trace, a candidate process) with the
 * reports and the timeline, and freed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "contract.h"
#include "fuzz_common.h"
#include "synth_traces.h"

static const char *fixed_session(void)
{
    static char *dir;
    if (!dir) {
        dir = tb_tempdir();
        if (!dir || fz_synth_session(dir)) {
            perror("fuzz_contract: cannot write the fixed session");
            abort();
        }
    }
    return dir;
}

static void remove_fixed_session(void)
{
    tb_remove_dir(fixed_session());
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fixed_session();
    atexit(remove_fixed_session);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ka_contract *c = NULL;
    char err[1024];
    if (ka_contract_parse((const char *)data, size, "fuzz.json", &c, err, sizeof err) != 0)
        return 0;
    fz_analyze(fixed_session(), c);
    ka_contract_free(c);
    return 0;
}
