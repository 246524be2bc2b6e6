/*
 * nvtx_dup_lib.c - a tiny shared object with a SONAME, for the library tests:
 * loaded from two paths it must be flagged as a duplicate; loaded
 * RTLD_GLOBAL, its cudaEventElapsedTime is what the global scope resolves,
 * the way a tampering extension would replace the timer.
 */
__attribute__((visibility("default"))) int kat_nvtx_dup_value(void)
{
    return 42;
}

__attribute__((visibility("default"))) int cudaEventElapsedTime(float *ms, void *start, void *end)
{
    (void)start;
    (void)end;
    *ms = 0.001f;
    return 0;
}
