/*
 * synth_traces.h - synthetic process traces for the analyzer fuzz targets:
 * seeds (mkseeds.c) and the fixed session fuzz_contract analyzes.
 */
#ifndef KAUDIT_FUZZ_SYNTH_TRACES_H
#define KAUDIT_FUZZ_SYNTH_TRACES_H

#include "trace_builder.h"

#define FZ_SYNTH_COUNT 5

/* Build variant 0..FZ_SYNTH_COUNT-1 into b (tb_init is called here). */
void fz_synth_trace(struct tb *b, int variant);
const char *fz_synth_name(int variant);
/* Write `info` and every variant as p<pid>-<ns>.kat into dir.  0 or -1. */
int fz_synth_session(const char *dir);

#endif
