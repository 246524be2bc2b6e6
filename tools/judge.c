/* judge.c - see judge.h. */
#define _GNU_SOURCE
#include "judge.h"
#include "session_seal.h"
#include "safe_file.h"

#include <fcntl.h>
#include <getopt.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int judge_parse(int argc, char **argv, enum judge_command which, const char *usage,
                struct judge_args *a)
{
    static const struct option opts[] = {
        { "contract", required_argument, 0, 'c' }, { "manifest", required_argument, 0, 'm' },
        { "inventory", required_argument, 0, 'i' }, { "weak", required_argument, 0, 'w' },
        { "json", no_argument, 0, 'j' },           { "save", no_argument, 0, 's' },
        { "perfetto", required_argument, 0, 'p' }, { "help", no_argument, 0, 'h' },
        { "semantic", required_argument, 0, 'S' }, { "inventory-digest", required_argument, 0, 'D' },
        { 0, 0, 0, 0 },
    };
    int report = which == JUDGE_REPORT;
    memset(a, 0, sizeof *a);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': a->contract = optarg; break;
        case 'm': a->manifest = optarg; break;
        case 'i': a->inventory = optarg; break;
        case 'D':
            if (!ka_contract_is_hex_digest(optarg))
                return cli_usage_error(usage, "--inventory-digest takes 32 lowercase hex digits, not '%s'", optarg);
            a->inventory_digest = optarg;
            break;
        case 'j': a->json = 1; break;
        case 's':
            if (report)
                goto bad;
            a->save = 1;
            break;
        case 'o':
            if (report)
                goto bad;
            a->out = optarg;
            break;
        case 'p':
            if (!report)
                goto bad;
            a->perfetto = optarg;
            break;
        case 'w':
            if (judge_parse_weak(optarg, &a->weak) != 0)
                return cli_usage_error(usage, "--weak takes ACCEPT or REJECT, not '%s'", optarg);
            break;
        case 'S':
            a->semantic_given = 1;
            if (!strcasecmp(optarg, "PASS"))
                a->semantic = KA_PASS;
            else if (!strcasecmp(optarg, "FAIL"))
                a->semantic = KA_FAIL;
            else if (!strcasecmp(optarg, "INCONCLUSIVE"))
                a->semantic = KA_INCONCLUSIVE;
            else
                return cli_usage_error(usage, "--semantic takes PASS, FAIL or INCONCLUSIVE, not '%s'",
                                       optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
        bad:
            return cli_bad_option(usage, c == ':', argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(usage, "%s", optind >= argc ? "no session directory given"
                                                           : "more than one session directory given");
    a->dir = argv[optind];
    if (!report && !a->contract)
        return cli_usage_error(usage, "--contract is required");
    return 0;
}

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
        fprintf(stderr, "kaudit: warning: '%s' was %s%s; replaced, not followed\n", path, kat_file_kind(st.st_mode),
                    S_ISREG(st.st_mode) ? " with other hard links" : "");
    char err[4096 + 128];
    FILE *f = kat_fopen_output(path, O_EXCL, err, sizeof err);
    if (!f) {
        cli_error("%s", err);
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
    /* a sealed session that no longer matches its seal is not judged */
    char chain[33];
    if (session_seal_verify(a->dir, chain, err, sizeof err) < 0) {
        cli_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    struct ka_timeline *tl = NULL;
    memset(j, 0, sizeof *j);
    if (ka_contract_load(a->contract, a->manifest, &j->contract, err, sizeof err) != 0)
        goto fail;
    struct kinv_err ierr;
    if (a->inventory && kinv_load(a->inventory, &j->inv, &ierr) != 0) {
        cli_error("%s", ierr.msg);
        return KAUDIT_EXIT_ERROR;
    }
    /* pinned as contracts are: an inventory edited with its digest
     * recomputed loads, but is not the one the user pinned */
    if (a->inventory_digest) {
        char hex[33];
        if (!j->inv) {
            cli_error("--inventory-digest %s: no inventory is used (--inventory none)", a->inventory_digest);
            return KAUDIT_EXIT_ERROR;
        }
        kinv_digest_hex(j->inv->digest, hex);
        if (strcmp(hex, a->inventory_digest) != 0) {
            cli_error("inventory '%s' has digest %s, not the pinned %s", a->inventory, hex, a->inventory_digest);
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
        cli_error("out of memory");
        return KAUDIT_EXIT_ERROR;
    }
    return KAUDIT_EXIT_OK;
fail:
    cli_error("%s", err);
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
