/*
 * cmd_analyze.c - `kaudit analyze` and `kaudit report`: verdicts from a
 * recorded session and a task contract (the analyzer does the work; this
 * file parses arguments, loads the inputs fail-closed and prints).
 *
 *   kaudit analyze DIR --contract FILE [--manifest FILE] [--inventory FILE]
 *                  [--weak ACCEPT|REJECT] [--json] [-o FILE] [--save]
 *   kaudit report DIR [--contract FILE ...] [--json] [--perfetto FILE]
 *
 * Exit status (both): 0 certificate PASS, 10 FAIL, 11 INCONCLUSIVE;
 * 1 bad input (contract, manifest, inventory, session); 2 usage.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "commands.h"
#include "contract.h"
#include "inventory.h"
#include "resources.h"

#define SAVED_ANALYSIS "analysis.json"

static const char analyze_usage[] =
    "usage: kaudit analyze DIR --contract FILE [options]\n"
    "\n"
    "Judge the recorded session in DIR against a task contract: a verdict per axis\n"
    "(semantic, implementation, measurement), the certificate, and with --weak the\n"
    "outcome code.  The contract must be pinned in a manifest (docs/contracts.md).\n"
    "\n"
    "  --contract FILE     the task contract (JSON)\n"
    "  --manifest FILE     the manifest that pins it (default: manifest.json beside the\n"
    "                      contract or up to three directories above)\n"
    "  --inventory FILE    a sealed vendor kernel inventory (docs/inventory.md); default\n"
    "                      $KAUDIT_INVENTORY, else the bundled calibrated H200 one\n"
    "                      (share/kaudit/" KAUDIT_BUNDLED_INVENTORY ");\n"
    "                      'none': kernel names and module digests are not checked\n"
    "  --weak ACCEPT|REJECT  the weak verifier's decision: adds the outcome code\n"
    "  --semantic V        the semantic axis verdict (PASS, FAIL, INCONCLUSIVE) from a\n"
    "                      separate stress run; without it the axis is UNSUPPORTED\n"
    "  --json              print the JSON report (docs/report-format.md) instead\n"
    "  -o FILE             also write the JSON report to FILE\n"
    "  --save              also write it to DIR/" SAVED_ANALYSIS " (read by 'kaudit report DIR')\n"
    "\n"
    "Exit status: 0 certificate PASS, 10 FAIL, 11 INCONCLUSIVE; 1 bad input; 2 usage.\n";

static const char report_usage[] =
    "usage: kaudit report DIR [--contract FILE [--manifest FILE] [--inventory FILE] [--weak W]]\n"
    "                         [--json] [--perfetto FILE]\n"
    "\n"
    "Explain what the analysis of DIR decided and why, with the evidence.  Without\n"
    "--contract, the contract, inventory and weak decision of DIR/" SAVED_ANALYSIS "\n"
    "(written by 'kaudit analyze --save') are used, and the analysis is run again.\n"
    "\n"
    "  --json            the JSON report instead of text\n"
    "  --perfetto FILE   also write a timeline (Chrome trace JSON; open it in\n"
    "                    ui.perfetto.dev): streams, kernels coloured by origin (red\n"
    "                    vendor, yellow framework, green candidate, grey unattributed),\n"
    "                    vendor calls, phases and timed windows\n"
    "\n"
    "Exit status: as 'kaudit analyze'.\n";

struct args {
    const char *dir, *contract, *manifest, *inventory, *out, *perfetto;
    enum ka_weak weak;
    int json, save;
    int semantic_given;
    enum ka_verdict semantic;
};

static int parse(int argc, char **argv, int report, struct args *a)
{
    static const struct option opts[] = {
        { "contract", required_argument, 0, 'c' }, { "manifest", required_argument, 0, 'm' },
        { "inventory", required_argument, 0, 'i' }, { "weak", required_argument, 0, 'w' },
        { "json", no_argument, 0, 'j' },           { "save", no_argument, 0, 's' },
        { "perfetto", required_argument, 0, 'p' }, { "help", no_argument, 0, 'h' },
        { "semantic", required_argument, 0, 'S' },
        { 0, 0, 0, 0 },
    };
    const char *usage = report ? report_usage : analyze_usage;
    memset(a, 0, sizeof *a);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': a->contract = optarg; break;
        case 'm': a->manifest = optarg; break;
        case 'i': a->inventory = optarg; break;
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
            if (!strcasecmp(optarg, "ACCEPT"))
                a->weak = KA_WEAK_ACCEPT;
            else if (!strcasecmp(optarg, "REJECT"))
                a->weak = KA_WEAK_REJECT;
            else {
                fprintf(stderr, "kaudit: error: --weak takes ACCEPT or REJECT, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'S':
            a->semantic_given = 1;
            if (!strcasecmp(optarg, "PASS"))
                a->semantic = KA_PASS;
            else if (!strcasecmp(optarg, "FAIL"))
                a->semantic = KA_FAIL;
            else if (!strcasecmp(optarg, "INCONCLUSIVE"))
                a->semantic = KA_INCONCLUSIVE;
            else {
                fprintf(stderr, "kaudit: error: --semantic takes PASS, FAIL or INCONCLUSIVE, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
        bad:
            fprintf(stderr, "kaudit: error: unknown option '%s'\n%s", argv[optind - 1], usage);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "kaudit: error: %s\n%s", optind >= argc ? "no session directory given" : "more than one session directory given", usage);
        return 2;
    }
    a->dir = argv[optind];
    if (!report && !a->contract) {
        fprintf(stderr, "kaudit: error: --contract is required\n%s", usage);
        return 2;
    }
    return 0;
}

static int verdict_exit(enum ka_verdict v)
{
    return v == KA_PASS ? 0 : v == KA_FAIL ? 10 : 11;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fputc('\n', f);
    return fclose(f);
}

/* For `kaudit report DIR` without --contract: what the saved analysis used. */
static int load_saved(struct args *a, char **owned_contract, char **owned_inventory)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", a->dir, SAVED_ANALYSIS);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr,
                "kaudit: error: no saved analysis '%s': give --contract, or run 'kaudit analyze --save' first\n",
                path);
        return 1;
    }
    char *buf = malloc(1 << 24);
    size_t len = buf ? fread(buf, 1, (1 << 24) - 1, f) : 0;
    fclose(f);
    if (!buf)
        return 1;
    buf[len] = 0;
    cJSON *root = cJSON_Parse(buf);
    free(buf);
    const cJSON *contract = cJSON_GetObjectItemCaseSensitive(root, "contract");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(contract, "file");
    if (!root || !cJSON_IsString(file)) {
        fprintf(stderr, "kaudit: error: saved analysis '%s' is not a kaudit report (contract.file missing)\n", path);
        cJSON_Delete(root);
        return 1;
    }
    *owned_contract = strdup(file->valuestring);
    a->contract = *owned_contract;
    const cJSON *inv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "inventory"), "file");
    if (!a->inventory && cJSON_IsString(inv)) {
        *owned_inventory = strdup(inv->valuestring);
        a->inventory = *owned_inventory;
    }
    const cJSON *weak = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "outcome"), "weak");
    if (!a->weak && cJSON_IsString(weak))
        a->weak = !strcmp(weak->valuestring, "ACCEPT") ? KA_WEAK_ACCEPT : KA_WEAK_REJECT;
    cJSON_Delete(root);
    return 0;
}

static int run(int argc, char **argv, int report)
{
    struct args a;
    int rc = parse(argc, argv, report, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    char *owned_contract = NULL, *owned_inventory = NULL;
    int from_saved = !a.contract;
    if (!a.contract && load_saved(&a, &owned_contract, &owned_inventory))
        return 1;
    /* No --inventory: the saved analysis's (none if it had none), else
     * $KAUDIT_INVENTORY, else the bundled one; "none": none (resources.h). */
    char inventory_found[4096];
    kres_inventory(a.inventory ? a.inventory : from_saved ? "none" : NULL, &a.inventory, inventory_found,
                   sizeof inventory_found);
    /* A saved analysis is re-run from anywhere: keep absolute paths in it. */
    char contract_real[4096], inventory_real[4096];
    if (a.save && realpath(a.contract, contract_real))
        a.contract = contract_real;
    if (a.save && a.inventory && realpath(a.inventory, inventory_real))
        a.inventory = inventory_real;
    char err[2048];
    struct ka_contract *contract = NULL;
    struct kinv_inventory *inv = NULL;
    struct ka_analysis *an = NULL;
    struct ka_timeline *tl = NULL;
    rc = 1;
    if (ka_contract_load(a.contract, a.manifest, &contract, err, sizeof err) != 0) {
        fprintf(stderr, "kaudit: error: %s\n", err);
        goto out;
    }
    struct kinv_err ierr;
    if (a.inventory && kinv_load(a.inventory, &inv, &ierr) != 0) {
        fprintf(stderr, "kaudit: error: %s\n", ierr.msg);
        goto out;
    }
    struct ka_options opt;
    memset(&opt, 0, sizeof opt);
    opt.inventory = inv;
    opt.inventory_path = a.inventory;
    opt.weak = a.weak;
    opt.semantic_given = a.semantic_given;
    opt.semantic = a.semantic;
    if (a.perfetto) {
        tl = ka_timeline_open(a.perfetto, err, sizeof err);
        if (!tl) {
            fprintf(stderr, "kaudit: error: %s\n", err);
            goto out;
        }
        ka_timeline_sink(tl, &opt);
    }
    if (ka_analyze(a.dir, contract, &opt, &an, err, sizeof err) != 0) {
        fprintf(stderr, "kaudit: error: %s\n", err);
        goto out;
    }
    if (tl) {
        int bad = ka_timeline_close(tl, err, sizeof err);
        tl = NULL;
        if (bad) {
            fprintf(stderr, "kaudit: error: %s\n", err);
            goto out;
        }
    }
    char *json = ka_report_json(an);
    if (!json) {
        fprintf(stderr, "kaudit: error: out of memory\n");
        goto out;
    }
    if (a.json)
        printf("%s\n", json);
    else if (report)
        ka_report_text(stdout, an);
    else
        ka_report_summary(stdout, an);
    int write_failed = 0;
    if (a.out && write_text(a.out, json) != 0) {
        fprintf(stderr, "kaudit: error: cannot write report '%s'\n", a.out);
        write_failed = 1;
    }
    if (a.save) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", a.dir, SAVED_ANALYSIS);
        if (write_text(path, json) != 0) {
            fprintf(stderr, "kaudit: error: cannot write '%s'\n", path);
            write_failed = 1;
        }
    }
    free(json);
    rc = write_failed ? 1 : verdict_exit(an->certificate);
out:
    if (tl)
        ka_timeline_close(tl, err, sizeof err);
    ka_analysis_free(an);
    kinv_free(inv);
    ka_contract_free(contract);
    free(owned_contract);
    free(owned_inventory);
    return rc;
}

int cmd_analyze(int argc, char **argv)
{
    return run(argc, argv, 0);
}

int cmd_report(int argc, char **argv)
{
    return run(argc, argv, 1);
}
