/*
 * contract_new.h - a contract written from a measured reference, without
 * hand-writing (`kaudit contract new`, and `kaudit audit` without
 * --contract): core self-implementation, the input specs that get_inputs()
 * returned, and the reference's work measured from the reference phase of
 * each recorded session (docs/audit.md, "Contracts without hand-writing").
 */
#ifndef KAUDIT_CONTRACT_NEW_H
#define KAUDIT_CONTRACT_NEW_H

#include <stddef.h>

/*
 * Writes the contract for the reference file `reference` to `path` from the
 * runner's event log `events` (its "inputs" event), and pins it in
 * `manifest` (created if absent).  0, or -1 with err.
 */
struct ka_contract;
/* ... and loads it back as any contract is loaded (pinned): into *out when
 * out is not NULL (the caller frees it), else only checked.  The
 * candidate's own code is what is loaded from its build caches: beneath
 * candidate_cache (kaudit audit's, as its process sees them: its
 * torch_extensions, triton and torchinductor folders), or, when NULL, the
 * folders this process's environment names. */
int contract_new_write(const char *path, const char *manifest, const char *reference, const char *events,
                       const char *candidate_cache, struct ka_contract **out, char *err, size_t n);

/*
 * `kaudit contract new`: runs the reference's get_inputs() in a runner of
 * its own (no recording, on device), then contract_new_write.  0 or -1 with
 * err (naming the runner's error when the reference does not run).
 */
int contract_new_from_reference(const char *reference, const char *path, const char *manifest, const char *python,
                                const char *device, double timeout_s, char *err, size_t n);

#endif
