/* judge.c - see judge.h. */
#define _GNU_SOURCE
#include "judge.h"
#include "session_seal.h"
#include "safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "toolbox.h"

int judge_parse_weak(const char *word, enum ka_weak *weak)
{
    if (!strcasecmp(word, "ACCEPT"))
        *weak = KA_WEAK_ACCEPT;
    else if (!strcasecmp(word, "REJECT"))
        *weak = KA_WEAK_REJECT;
    else
        return -1;
    return 0;
}

int judge_exit_status(enum ka_verdict v)
{
    return v == KA_PASS ? KAUDIT_EXIT_OK : v == KA_FAIL ? KAUDIT_EXIT_FAIL : KAUDIT_EXIT_INCONCLUSIVE;
}

int judge_write_session_text(const char *path, const char *text)
{
    /* In the session directory: a planted file (a symlink to a file of the
     * user's, a FIFO) is removed and replaced, never followed (safe_file.h). */
    struct stat st;
    if (lstat(path, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_nlink > 1))
        kat_say("warning", "'%s' was %s%s; replaced, not followed", path, kat_file_kind(st.st_mode),
                    S_ISREG(st.st_mode) ? " with other hard links" : "");
    char err[4096 + 128];
    FILE *f = kat_fopen_output(path, O_EXCL, err, sizeof err);
    if (!f) {
        kat_error("%s", err);
        return -1;
    }
    fputs(text, f);
    fputc('\n', f);
    return fclose(f);
}

int judge_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fputc('\n', f);
    return fclose(f);
}

int judge_run(const struct judge_args *a, struct judge *j)
{
    char err[2048];
    memset(j, 0, sizeof *j); /* judge_free follows every return */
    /* a sealed session that no longer matches its seal is not judged */
    char chain[33];
    if (session_seal_verify(a->dir, chain, err, sizeof err) < 0) {
        kat_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    struct ka_timeline *tl = NULL;
    if (ka_contract_load(a->contract, a->manifest, &j->contract, err, sizeof err) != 0)
        goto fail;
    struct kinv_err ierr;
    if (a->inventory && kinv_load(a->inventory, &j->inv, &ierr) != 0) {
        kat_error("%s", ierr.msg);
        return KAUDIT_EXIT_ERROR;
    }
    /* pinned as contracts are: an inventory edited with its digest
     * recomputed loads, but is not the one the user pinned */
    if (a->inventory_digest) {
        char hex[33];
        if (!j->inv) {
            kat_error("--inventory-digest %s: no inventory is used (--inventory none)", a->inventory_digest);
            return KAUDIT_EXIT_ERROR;
        }
        kinv_digest_hex(j->inv->digest, hex);
        if (strcmp(hex, a->inventory_digest) != 0) {
            kat_error("inventory '%s' has digest %s, not the pinned %s", a->inventory, hex, a->inventory_digest);
            return KAUDIT_EXIT_ERROR;
        }
    }
    struct ka_options opt;
    memset(&opt, 0, sizeof opt);
    opt.inventory = j->inv;
    opt.inventory_path = a->inventory;
    opt.weak = a->weak;
    opt.semantic_given = a->semantic_given;
    opt.semantic = a->semantic;
    if (a->perfetto) {
        tl = ka_timeline_open(a->perfetto, err, sizeof err);
        if (!tl)
            goto fail;
        ka_timeline_sink(tl, &opt);
    }
    if (ka_analyze(a->dir, j->contract, &opt, &j->an, err, sizeof err) != 0) {
        char ignored[256];
        if (tl)
            ka_timeline_close(tl, ignored, sizeof ignored);
        goto fail;
    }
    if (tl && ka_timeline_close(tl, err, sizeof err) != 0)
        goto fail;
    j->json = ka_report_json(j->an);
    if (!j->json) {
        kat_error("out of memory");
        return KAUDIT_EXIT_ERROR;
    }
    return KAUDIT_EXIT_OK;
fail:
    kat_error("%s", err);
    return KAUDIT_EXIT_ERROR;
}

void judge_free(struct judge *j)
{
    free(j->json);
    ka_analysis_free(j->an);
    kinv_free(j->inv);
    ka_contract_free(j->contract);
    memset(j, 0, sizeof *j);
}
