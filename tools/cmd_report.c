/*
 * cmd_report.c - `kaudit report`: explain what the analysis of a session
 * decided and why, with the evidence (text, JSON, a Perfetto timeline).
 * judge.c parses the options and runs the analysis, as for `kaudit analyze`.
 *
 *   kaudit report DIR [--contract FILE ...] [--json] [--perfetto FILE]
 *
 * Without --contract, the inputs of DIR/analysis.json (kaudit analyze --save)
 * are used: contract, inventory, weak decision and a supplied semantic verdict.  Exit status: as `kaudit analyze`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commands.h"
#include "judge.h"
#include "safe_file.h"
#include "resources.h"
#include "session_seal.h"

static const char report_usage[] =
    "usage: kaudit report DIR [--contract FILE [--manifest FILE] [--inventory FILE] [--weak W]]\n"
    "                         [--json] [--perfetto FILE]\n"
    "\n"
    "Explain what the analysis of DIR decided and why, with the evidence.  Without\n"
    "--contract, the contract, inventory, weak decision and supplied semantic verdict\n"
    "of DIR/" SAVED_ANALYSIS " (written by 'kaudit analyze --save') are used, and the\n"
    "analysis is run again.\n"
    "Without --inventory: $KAUDIT_INVENTORY, else the bundled calibrated one\n"
    "('none': no inventory; a saved analysis keeps what it used).\n"
    "\n"
    "  --json            the JSON report instead of text\n"
    "  --perfetto FILE   also write a timeline (Chrome trace JSON; open it in\n"
    "                    ui.perfetto.dev): streams, kernels coloured by origin (red\n"
    "                    vendor, yellow framework, green candidate, grey unattributed),\n"
    "                    vendor calls, phases and timed windows\n"
    "\n"
    "Exit status: as 'kaudit analyze'.\n";

/* For `kaudit report DIR` without --contract: what the saved analysis used. */
static int load_saved(struct judge_args *a, char **owned_contract, char **owned_inventory)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", a->dir, SAVED_ANALYSIS);
    /* In the session directory: O_NOFOLLOW, and a FIFO is refused, never
     * waited on (safe_file.h). */
    char *buf = NULL, detail[4096 + 128];
    if (kat_read_input(path, KAT_SAFE_NOFOLLOW, (1 << 24) - 1, &buf, NULL, detail, sizeof detail) != 0) {
        if (errno == ENOENT)
            cli_error("no saved analysis '%s': give --contract, or run 'kaudit analyze --save' first", path);
        else
            cli_error("cannot read the saved analysis: %s", detail);
        return KAUDIT_EXIT_ERROR;
    }
    /* only an analysis kaudit saved, over the session as it still is */
    if (session_seal_analysis_verify(a->dir, SAVED_ANALYSIS, detail, sizeof detail) != 0) {
        free(buf);
        cli_error("%s; give --contract to judge the session afresh", detail);
        return KAUDIT_EXIT_ERROR;
    }
    cJSON *root = cJSON_Parse(buf);
    free(buf);
    const cJSON *contract = cJSON_GetObjectItemCaseSensitive(root, "contract");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(contract, "file");
    if (!root || !cJSON_IsString(file)) {
        cli_error("saved analysis '%s' is not a kaudit report (contract.file missing)", path);
        cJSON_Delete(root);
        return KAUDIT_EXIT_ERROR;
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
    /* A semantic verdict supplied to analyze (--semantic) is part of what it
     * judged: restored unless report is given its own (version 2 reports). */
    const cJSON *sem = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "axes"), "semantic");
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(sem, "source");
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(sem, "verdict");
    if (!a->semantic_given && cJSON_IsString(source) && !strcmp(source->valuestring, "supplied") &&
        cJSON_IsString(verdict)) {
        if (!strcmp(verdict->valuestring, "PASS"))
            a->semantic = KA_PASS, a->semantic_given = 1;
        else if (!strcmp(verdict->valuestring, "FAIL"))
            a->semantic = KA_FAIL, a->semantic_given = 1;
        else if (!strcmp(verdict->valuestring, "INCONCLUSIVE"))
            a->semantic = KA_INCONCLUSIVE, a->semantic_given = 1;
        else {
            cli_error("saved analysis '%s': axes.semantic.verdict '%s' is not PASS, FAIL or INCONCLUSIVE", path,
                      verdict->valuestring);
            cJSON_Delete(root);
            return KAUDIT_EXIT_ERROR;
        }
    }
    cJSON_Delete(root);
    return 0;
}

int cmd_report(int argc, char **argv)
{
    struct judge_args a;
    int rc = judge_parse(argc, argv, JUDGE_REPORT, report_usage, &a);
    if (rc)
        return rc < 0 ? KAUDIT_EXIT_OK : rc;
    char *owned_contract = NULL, *owned_inventory = NULL;
    int from_saved = !a.contract;
    if (!a.contract && load_saved(&a, &owned_contract, &owned_inventory))
        return KAUDIT_EXIT_ERROR;
    /* No --inventory: the saved analysis's (none if it had none), else
     * $KAUDIT_INVENTORY, else the bundled one; "none": none (resources.h). */
    char inventory_found[4096];
    kres_inventory(a.inventory ? a.inventory : from_saved ? "none" : NULL, &a.inventory, inventory_found,
                   sizeof inventory_found);
    struct judge j;
    rc = judge_run(&a, &j);
    if (!rc) {
        if (a.json)
            printf("%s\n", j.json);
        else
            ka_report_text(stdout, j.an);
        rc = judge_exit_status(j.an->certificate);
    }
    judge_free(&j);
    free(owned_contract);
    free(owned_inventory);
    return rc;
}
