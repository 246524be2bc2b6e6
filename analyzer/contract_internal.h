/*
 * contract_internal.h - what the contract files share (private to
 * analyzer/): contract.c reads files and JSON, contract_parse.c checks a
 * contract's fields, contract_manifest.c pins contracts by digest.
 */
#ifndef KAUDIT_CONTRACT_INTERNAL_H
#define KAUDIT_CONTRACT_INTERNAL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "contract.h"

/* The whole file (at most 4 MiB, NUL-terminated), or NULL with err naming it as `what`. */
char *ka_contract_read_file(const char *path, size_t *len, char *err, size_t n, const char *what);
/* XXH3-128 of data as 32 hex digits. */
void ka_contract_digest_hex(const void *data, size_t len, char hex[33]);
/* 32 lowercase hex digits. */
/* One JSON value and only whitespace after it, or NULL with err (line and column). */
cJSON *ka_contract_parse_json(const char *text, size_t len, const char *what, const char *name, char *err,
                              size_t n);

#endif
