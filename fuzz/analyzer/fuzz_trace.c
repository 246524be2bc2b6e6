/*
 * fuzz_trace.c - the whole analysis of a session whose only trace is the
 * input.  The scratch session directory is made once per process; each input
 * rewrites its one .kat file, which ka_analyze then reads twice (index, then
 * kernels) against the fixed contract (fuzz_common.h), and the reports and
 * the timeline are written to /dev/null.  A trace is hostile input: the
 * analysis must never crash, leak or hang on one, only report it.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct ka_contract *c = fz_contract();
    fz_write_trace(data, size);
    fz_analyze(fz_session_dir(), c);
    return 0;
}
