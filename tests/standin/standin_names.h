/* standin_names.h - name tables generated from the CUPTI headers (gen_names.cmake). */
#ifndef STANDIN_NAMES_H
#define STANDIN_NAMES_H

#include <stdint.h>

struct standin_name {
    uint32_t value;
    const char *name;           /* NULL ends a table */
};

/* "cudaLaunchKernel_v7000" etc., as cuptiGetCallbackName returns them. */
extern const struct standin_name standin_runtime_cbid_names[];
extern const struct standin_name standin_driver_cbid_names[];
/* "CUPTI_ERROR_INVALID_PARAMETER" etc. */
extern const struct standin_name standin_cupti_result_names[];

#endif
