/*
 * fuzz_common.c - see fuzz_common.h.
 */
#define _GNU_SOURCE
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "inventory.h"
#include "trace_builder.h"

static char *session_dir;
static char trace_path[4096];

static void remove_session(void)
{
    if (session_dir)
        tb_remove_dir(session_dir);
}

const char *fz_session_dir(void)
{
    if (session_dir)
        return session_dir;
    session_dir = tb_tempdir();
    if (!session_dir) {
        perror("fuzz: cannot make a session directory");
        abort();
    }
    if (tb_write_text(session_dir, "info",
                      "kaudit-session\nformat_version: 1\ntool_version: 0.1.0\ncommand: fuzz\n"
                      "status: exited 0\n")) {
        perror("fuzz: cannot write the session's info");
        abort();
    }
    snprintf(trace_path, sizeof trace_path, "%s/p100-1700000000000000000.kat", session_dir);
    atexit(remove_session);
    return session_dir;
}

void fz_write_trace(const uint8_t *data, size_t size)
{
    fz_session_dir();
    FILE *f = fopen(trace_path, "wb");
    if (!f) {
        perror("fuzz: cannot write the trace");
        abort();
    }
    if ((size && fwrite(data, 1, size, f) != size) | (fclose(f) != 0)) {
        perror("fuzz: cannot write the trace");
        abort();
    }
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

const struct ka_contract *fz_contract(void)
{
    static struct ka_contract *c;
    if (c)
        return c;
    const char *path = getenv("KA_FUZZ_CONTRACT");
    if (!path || !*path)
        path = KA_FUZZ_SOURCE_DIR "/contracts/controls/add.json";
    size_t len;
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "fuzz: cannot read the contract '%s' (set KA_FUZZ_CONTRACT)\n", path);
        abort();
    }
    char err[1024];
    if (ka_contract_parse(text, len, path, &c, err, sizeof err)) {
        fprintf(stderr, "fuzz: %s\n", err);
        abort();
    }
    free(text);
    return c;
}

const struct kinv_inventory *fz_inventory(void)
{
    static int tried;
    static struct kinv_inventory *inv;
    if (tried)
        return inv;
    tried = 1;
    const char *path = getenv("KA_FUZZ_INVENTORY");
    if (!path || !*path)
        return NULL;
    struct kinv_err err;
    if (kinv_load(path, &inv, &err)) {
        fprintf(stderr, "fuzz: cannot load the inventory '%s': %s\n", path, err.msg);
        abort();
    }
    return inv;
}

void fz_analyze(const char *dir, const struct ka_contract *c)
{
    struct ka_options opt;
    memset(&opt, 0, sizeof opt);
    opt.inventory = fz_inventory();
    opt.inventory_path = opt.inventory ? "fuzz.inventory" : NULL;
    opt.weak = KA_WEAK_ACCEPT;
    char err[1024];
    struct ka_timeline *tl = ka_timeline_open("/dev/null", err, sizeof err);
    if (tl)
        ka_timeline_sink(tl, &opt);
    struct ka_analysis *a = NULL;
    int rc = ka_analyze(dir, c, &opt, &a, err, sizeof err);
    if (tl)
        ka_timeline_close(tl, err, sizeof err);
    if (rc != 0)
        return;
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        ka_report_summary(null, a);
        ka_report_text(null, a);
        fclose(null);
    }
    free(ka_report_json(a));
    ka_analysis_free(a);
}
