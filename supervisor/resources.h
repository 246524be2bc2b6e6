/*
 * resources.h - where kaudit finds what it did not get on the command line:
 * the preload library, the audit module, the Python support files, and the
 * data it ships (the calibrated inventory, the contracts, the example
 * sessions), relative to the running executable (/proc/self/exe).
 *
 * Order, for each resource (the first that exists wins):
 *   1. its environment override (KAUDIT_PRELOAD_LIB, KAUDIT_AUDIT_LIB,
 *      KAUDIT_INVENTORY, KAUDIT_DATA_DIR);
 *   2. the install layout:  P/bin/kaudit -> P/lib/kaudit/libkaudit_preload.so,
 *      P/lib/kaudit/libkaudit_audit.so, P/lib/kaudit/kaudit-python/,
 *      P/share/kaudit/{inventory/data,contracts,examples}/;
 *   3. the build tree:      build/bin/kaudit -> build/lib/libkaudit_preload.so,
 *      ..., and the data in the source tree the build was configured from
 *      (KAUDIT_SOURCE_DIR, used only when the binary runs from that build
 *      directory, never by a copied binary).
 * The data root (share/kaudit, or the source tree) holds the data at the same
 * relative paths as the source tree: inventory/data/, contracts/, examples/.
 */
#ifndef KAUDIT_RESOURCES_H
#define KAUDIT_RESOURCES_H

#include <stddef.h>

/* Environment overrides that only the tools read (the preload's are in kaudit_env.h). */
#define KAUDIT_ENV_INVENTORY "KAUDIT_INVENTORY" /* default inventory; "none" = none */
#define KAUDIT_ENV_DATA_DIR "KAUDIT_DATA_DIR"   /* data root (contracts/, examples/, inventory/data/) */

/* The bundled calibrated inventory, relative to the data root. */
#define KAUDIT_BUNDLED_INVENTORY "inventory/data/h200-torch2.11-calibrated.inventory.zst"

/* The directory of the running kaudit binary (absolute), or NULL. */
const char *kres_exe_dir(void);

/*
 * The preload library: $KAUDIT_PRELOAD_LIB, else beside the binary's layout.
 * 0 found (out is absolute); -1 not found (a message is in err).
 */
int kres_preload(char *out, size_t size, char *err, size_t err_size);

/*
 * The audit module: $KAUDIT_AUDIT_LIB ("none": 1, go without), else
 * libkaudit_audit.so beside the preload library.  0 found (out absolute),
 * 1 turned off, -1 not readable (out then holds the path tried).
 */
int kres_audit(const char *preload, char *out, size_t size);

/* kaudit-python/ (holding sitecustomize.py) beside the preload library, else
 * in the binary's layout.  0 found, -1 not. */
int kres_python_dir(const char *preload, char *out, size_t size);

/* The data root: $KAUDIT_DATA_DIR, else P/share/kaudit, else (build tree
 * only) the source directory.  0 found (out absolute), -1 not. */
int kres_data_dir(char *out, size_t size);

/* A file or directory under the data root (relative path).  0 found, -1 not. */
int kres_data_file(const char *relative, char *out, size_t size);

/*
 * The inventory for analyze/report: `given` (--inventory) if not NULL, else
 * $KAUDIT_INVENTORY, else the bundled one.  "none" (either way) means no
 * inventory: *path = NULL.  A bundled inventory that cannot be found is a
 * warning, and the analysis runs without one; a named one is loaded as named
 * (its errors are the loader's).  `buf` holds the path when it is found here.
 */
void kres_inventory(const char *given, const char **path, char *buf, size_t size);

#endif /* KAUDIT_RESOURCES_H */
