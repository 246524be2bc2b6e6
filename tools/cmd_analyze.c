/*
 * cmd_analyze.c - `kaudit analyze`: verdicts from a recorded session and a
 * task contract (the analyzer does the work; judge.c parses the options and
 * loads the inputs fail-closed; this file prints and saves).
 *
 *   kaudit analyze DIR --contract FILE [--manifest FILE] [--inventory FILE]
 *                  [--weak ACCEPT|REJECT] [--semantic V] [--json] [-o FILE] [--save]
 *
 * Exit status (cli.h): 0 certificate PASS, 10 FAIL, 11 INCONCLUSIVE;
 * 1 bad input (contract, manifest, inventory, session) or a failed write;
 * 2 usage.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "judge.h"
#include "session_seal.h"
#include "resources.h"

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
    "  --inventory-digest HEX  refuse an inventory whose digest is not HEX (pinned)\n"
    "  --weak ACCEPT|REJECT  the weak verifier's decision: adds the outcome code\n"
    "  --semantic V        the semantic axis verdict (PASS, FAIL, INCONCLUSIVE) from a\n"
    "                      separate stress run; without it the axis is UNSUPPORTED\n"
    "  --json              print the JSON report (docs/report-format.md) instead\n"
    "  -o FILE             also write the JSON report to FILE\n"
    "  --save              also write it to DIR/" SAVED_ANALYSIS " (read by 'kaudit report DIR')\n"
    "\n"
    "Exit status: 0 certificate PASS, 10 FAIL, 11 INCONCLUSIVE; 1 bad input; 2 usage.\n";

int cmd_analyze(int argc, char **argv)
{
    struct judge_args a;
    int rc = judge_parse(argc, argv, JUDGE_ANALYZE, analyze_usage, &a);
    if (rc)
        return rc < 0 ? KAUDIT_EXIT_OK : rc;
    /* No --inventory: $KAUDIT_INVENTORY, else the bundled one; "none": none (resources.h). */
    char inventory_found[PATH_MAX];
    kres_inventory(a.inventory, &a.inventory, inventory_found, sizeof inventory_found);
    /* A saved analysis is re-run from anywhere: keep absolute paths in it. */
    char contract_real[PATH_MAX], inventory_real[PATH_MAX];
    if (a.save && realpath(a.contract, contract_real))
        a.contract = contract_real;
    if (a.save && a.inventory && realpath(a.inventory, inventory_real))
        a.inventory = inventory_real;
    struct judge j;
    rc = judge_run(&a, &j);
    if (rc) {
        judge_free(&j);
        return rc;
    }
    if (a.json)
        printf("%s\n", j.json);
    else
        ka_report_summary(stdout, j.an);
    int write_failed = 0;
    if (a.out && judge_write_text(a.out, j.json) != 0) {
        cli_error("cannot write report '%s'", a.out);
        write_failed = 1;
    }
    if (a.save) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", a.dir, SAVED_ANALYSIS);
        char err[4096];
        if (judge_write_session_text(path, j.json) != 0) {
            cli_error("cannot write '%s'", path);
            write_failed = 1;
        } else if (session_seal_analysis_write(a.dir, SAVED_ANALYSIS, err, sizeof err) != 0) {
            cli_error("%s", err);
            write_failed = 1;
        }
    }
    rc = write_failed ? KAUDIT_EXIT_ERROR : judge_exit_status(j.an->certificate);
    judge_free(&j);
    return rc;
}
