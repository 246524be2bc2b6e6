/*
 * contract_manifest.c - contracts pinned by digest: the manifest that lists
 * them, loading a contract only when its digest is the pinned one, checking
 * and writing the manifest (contract.h, docs/contracts.md).
 */
#define _GNU_SOURCE
#include "contract.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract_internal.h"

/* ---- the manifest ----------------------------------------------------- */

struct manifest_entry {
    char *path;     /* as listed, relative to the manifest's directory */
    char digest[33];
};

struct manifest {
    char *file;
    char *dir;
    struct manifest_entry *entries;
    size_t n;
};

static void manifest_free(struct manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->entries[i].path);
    free(m->entries);
    free(m->file);
    free(m->dir);
    memset(m, 0, sizeof *m);
}

static int manifest_read(const char *file, struct manifest *m, char *err, size_t n)
{
    memset(m, 0, sizeof *m);
    size_t len;
    char *text = ka_contract_read_file(file, &len, err, n, "contract manifest");
    if (!text)
        return -1;
    cJSON *root = ka_contract_parse_json(text, len, "contract manifest", file, err, n);
    free(text);
    if (!root)
        return -1;
    int rc = -1;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "kaudit_contract_manifest");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "contracts");
    if (!cJSON_IsObject(root) || !cJSON_IsNumber(ver) || ver->valuedouble != KA_MANIFEST_VERSION) {
        snprintf(err, n, "contract manifest '%s': kaudit_contract_manifest: expected version %d", file,
                 KA_MANIFEST_VERSION);
        goto out;
    }
    if (!cJSON_IsArray(list)) {
        snprintf(err, n, "contract manifest '%s': contracts: expected an array", file);
        goto out;
    }
    m->entries = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof *m->entries);
    int i = 0;
    for (const cJSON *it = list->child; it; it = it->next, i++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "digest");
        if (!cJSON_IsString(p) || !cJSON_IsString(d) || !ka_contract_is_hex_digest(d->valuestring) ||
            !*p->valuestring || p->valuestring[0] == '/' || strstr(p->valuestring, "..")) {
            snprintf(err, n,
                     "contract manifest '%s': contracts[%d]: expected {\"path\": a relative path without "
                     "'..', \"digest\": 32 hex digits}",
                     file, i);
            goto out;
        }
        for (size_t j = 0; j < m->n; j++)
            if (!strcmp(m->entries[j].path, p->valuestring)) {
                snprintf(err, n, "contract manifest '%s': contracts[%d]: '%s' is listed twice", file, i,
                         p->valuestring);
                goto out;
            }
        m->entries[m->n].path = strdup(p->valuestring);
        memcpy(m->entries[m->n].digest, d->valuestring, 33);
        m->n++;
    }
    m->file = strdup(file);
    char *tmp = strdup(file);
    m->dir = strdup(dirname(tmp));
    free(tmp);
    rc = 0;
out:
    cJSON_Delete(root);
    if (rc)
        manifest_free(m);
    return rc;
}

/* Find manifest.json beside the contract or up to three directories above it. */
static char *find_manifest(const char *contract)
{
    char dir[PATH_MAX];
    if (!realpath(contract, dir))
        return NULL;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    for (int up = 0; up < 4; up++) {
        char cand[PATH_MAX + 32];
        snprintf(cand, sizeof cand, "%s/manifest.json", *dir ? dir : "");
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode))
            return strdup(cand);
        slash = strrchr(dir, '/');
        if (!slash)
            break;
        *slash = 0;
    }
    return NULL;
}

/* The manifest entry naming the same file as path (compared by realpath). */
static const struct manifest_entry *manifest_lookup(const struct manifest *m, const char *path)
{
    char want[PATH_MAX];
    if (!realpath(path, want))
        return NULL;
    for (size_t i = 0; i < m->n; i++) {
        char listed[PATH_MAX * 2], real[PATH_MAX];
        snprintf(listed, sizeof listed, "%s/%s", m->dir, m->entries[i].path);
        if (realpath(listed, real) && !strcmp(real, want))
            return &m->entries[i];
    }
    return NULL;
}

int ka_contract_load(const char *path, const char *manifest, struct ka_contract **out, char *err, size_t n)
{
    *out = NULL;
    size_t len;
    char *text = ka_contract_read_file(path, &len, err, n, "contract");
    if (!text)
        return -1;
    char *found = manifest ? strdup(manifest) : find_manifest(path);
    if (!found) {
        snprintf(err, n,
                 "contract '%s' is not pinned: no manifest.json beside it or in the directories above "
                 "(give --manifest, or pin it with 'kaudit contract pin')",
                 path);
        free(text);
        return -1;
    }
    struct manifest m;
    if (manifest_read(found, &m, err, n) != 0) {
        free(found);
        free(text);
        return -1;
    }
    int rc = -1;
    const struct manifest_entry *e = manifest_lookup(&m, path);
    char hex[33];
    ka_contract_digest_hex(text, len, hex);
    if (!e) {
        snprintf(err, n, "contract '%s' is not listed in the manifest '%s' (pin it with 'kaudit contract pin')",
                 path, found);
    } else if (strcmp(e->digest, hex)) {
        snprintf(err, n, "contract '%s' does not match its manifest '%s': digest %s, pinned %s", path, found,
                 hex, e->digest);
    } else {
        rc = ka_contract_parse(text, len, path, out, err, n);
    }
    manifest_free(&m);
    free(found);
    free(text);
    return rc;
}

int ka_manifest_check(const char *manifest, void (*problem)(const char *msg, void *arg), void *arg,
                      size_t *n_checked, char *err, size_t n)
{
    struct manifest m;
    *n_checked = 0;
    if (manifest_read(manifest, &m, err, n) != 0)
        return -1;
    int bad = 0;
    for (size_t i = 0; i < m.n; i++) {
        char path[PATH_MAX * 2], msg[2048];
        snprintf(path, sizeof path, "%s/%s", m.dir, m.entries[i].path);
        struct ka_contract *k;
        if (ka_contract_load(path, manifest, &k, msg, sizeof msg) != 0) {
            if (problem)
                problem(msg, arg);
            bad++;
        } else {
            ka_contract_free(k);
        }
        (*n_checked)++;
    }
    manifest_free(&m);
    if (bad) {
        snprintf(err, n, "contract manifest '%s': %d of %zu contracts do not verify", manifest, bad, *n_checked);
        return -1;
    }
    return 0;
}

static int cmp_entries(const void *a, const void *b)
{
    return strcmp(((const struct manifest_entry *)a)->path, ((const struct manifest_entry *)b)->path);
}

int ka_manifest_pin(const char *manifest, const char *const *contracts, size_t n_contracts, char *err, size_t n)
{
    struct manifest m;
    struct stat st;
    if (stat(manifest, &st) == 0) {
        if (manifest_read(manifest, &m, err, n) != 0)
            return -1;
    } else {
        memset(&m, 0, sizeof m);
        char *tmp = strdup(manifest);
        m.dir = strdup(dirname(tmp));
        free(tmp);
    }
    char mdir[PATH_MAX];
    if (!realpath(m.dir, mdir)) {
        snprintf(err, n, "contract manifest '%s': cannot resolve its directory", manifest);
        manifest_free(&m);
        return -1;
    }
    int rc = -1;
    for (size_t i = 0; i < n_contracts; i++) {
        size_t len;
        char *text = ka_contract_read_file(contracts[i], &len, err, n, "contract");
        if (!text)
            goto out;
        struct ka_contract *k;
        if (ka_contract_parse(text, len, contracts[i], &k, err, n) != 0) {
            free(text);
            goto out;
        }
        ka_contract_free(k);
        char hex[33], real[PATH_MAX];
        ka_contract_digest_hex(text, len, hex);
        free(text);
        if (!realpath(contracts[i], real) || strncmp(real, mdir, strlen(mdir)) || real[strlen(mdir)] != '/') {
            snprintf(err, n, "contract '%s' is not under the manifest's directory '%s'", contracts[i], mdir);
            goto out;
        }
        const char *rel = real + strlen(mdir) + 1;
        for (const char *q = rel; *q; q++)
            if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20) {
                snprintf(err, n, "contract '%s': its path has a character a manifest entry cannot hold", contracts[i]);
                goto out;
            }
        size_t j;
        for (j = 0; j < m.n; j++)
            if (!strcmp(m.entries[j].path, rel))
                break;
        if (j == m.n) {
            struct manifest_entry *grown = realloc(m.entries, (m.n + 1) * sizeof *grown);
            if (!grown) {
                snprintf(err, n, "out of memory");
                goto out;
            }
            m.entries = grown;
            m.entries[m.n].path = strdup(rel);
            m.n++;
        }
        memcpy(m.entries[j].digest, hex, 33);
    }
    qsort(m.entries, m.n, sizeof *m.entries, cmp_entries);
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp", manifest);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, n, "cannot write contract manifest '%s': %s", tmp, strerror(errno));
        goto out;
    }
    fprintf(f, "{\n  \"kaudit_contract_manifest\": %d,\n  \"contracts\": [\n", KA_MANIFEST_VERSION);
    for (size_t j = 0; j < m.n; j++)
        fprintf(f, "    {\"path\": \"%s\", \"digest\": \"%s\"}%s\n", m.entries[j].path, m.entries[j].digest,
                j + 1 < m.n ? "," : "");
    fprintf(f, "  ]\n}\n");
    if (fclose(f) != 0 || rename(tmp, manifest) != 0) {
        snprintf(err, n, "cannot write contract manifest '%s': %s", manifest, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    manifest_free(&m);
    return rc;
}
