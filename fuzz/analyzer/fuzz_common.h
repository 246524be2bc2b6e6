/*
 * fuzz_common.h - what both analyzer fuzz targets share: a scratch session
 * directory per process, the fixed contract, an optional inventory, and one
 * full analysis (verdicts, the three reports, the Perfetto timeline).
 */
#ifndef KAUDIT_FUZZ_COMMON_H
#define KAUDIT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

/*
 * A directory made once per process under $TMPDIR (or /tmp) with a fixed
 * `info` file; removed at exit.  Aborts when it cannot be made.
 */
const char *fz_session_dir(void);

/* Replace the only trace of the scratch session with these bytes. */
void fz_write_trace(const uint8_t *data, size_t size);

/*
 * The fixed contract: the file named by $KA_FUZZ_CONTRACT, else the
 * repository's contracts/controls/add.json (KA_FUZZ_SOURCE_DIR).  Parsed
 * once; aborts when it does not parse.
 */
const struct ka_contract *fz_contract(void);

/* The inventory named by $KA_FUZZ_INVENTORY, loaded once; NULL without one. */
const struct kinv_inventory *fz_inventory(void);

/* ka_analyze, then every report and a timeline to /dev/null, then free. */
void fz_analyze(const char *dir, const struct ka_contract *c);

#endif
