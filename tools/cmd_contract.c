/*
 * cmd_contract.c - `kaudit contract`: check and pin task contracts.
 *
 *   kaudit contract check [MANIFEST]        verify every contract a manifest lists
 *   kaudit contract pin MANIFEST FILE...    add or update contracts in a manifest
 *   kaudit contract show FILE [--manifest M] load one contract (fail-closed) and print it
 *   kaudit contract new --reference REF.py [-o OUT] [--manifest M]
 *                                           write a contract from the reference and pin it
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "contract.h"
#include "contract_new.h"
#include "inventory.h"

static const char contract_usage[] =
    "usage: kaudit contract check [MANIFEST]\n"
    "       kaudit contract pin MANIFEST CONTRACT...\n"
    "       kaudit contract show CONTRACT [--manifest MANIFEST]\n"
    "       kaudit contract new --reference REF.py [-o OUT.json] [--manifest MANIFEST] [--python PY] [--device D]\n"
    "\n"
    "check: verify that every contract MANIFEST lists (default contracts/manifest.json)\n"
    "       exists, matches its XXH3-128 digest and parses.\n"
    "pin:   check each CONTRACT and write its digest into MANIFEST (created if absent).\n"
    "show:  load CONTRACT the way 'kaudit analyze' does and print its policy.\n"
    "new:   run REF.py's get_inputs() (in a fresh Python, on --device, default cpu) and write a\n"
    "       core-self-implementation contract with its input specs, the reference's work measured\n"
    "       from the reference phase of each session; OUT defaults to the reference's name .json,\n"
    "       MANIFEST to manifest.json beside OUT; the contract is pinned there.\n";

static void print_problem(const char *msg, void *arg)
{
    (void)arg;
    cli_error("%s", msg);
}

static void show(const struct ka_contract *c)
{
    char hex[33];
    kinv_digest_hex(c->digest, hex);
    printf("task %s (%s, digest %s)\n", c->task_id, c->file, hex);
    if (c->description)
        printf("  %s\n", c->description);
    printf("  self-implemented: %s\n", c->self_implemented ? "yes" : "no");
    printf("  forbidden:");
    for (int i = 0; i < KA_CLASS_COUNT; i++)
        if (c->forbidden & (1u << i))
            printf(" %s", ka_class_name(i));
    printf("\n  mediators: allocation %s, memset %s, copies %s, layout glue %s\n", c->allow_allocation ? "yes" : "no",
           c->allow_memset ? "yes" : "no", c->allow_copies ? "yes" : "no", c->allow_glue ? "yes" : "no");
    for (size_t i = 0; i < c->n_epilogues; i++)
        printf("  epilogue: %s up to %.3g%% of the reference's work%s%s\n", ka_class_name(c->epilogues[i].cls),
               100 * c->epilogues[i].max_share, c->epilogues[i].note ? ": " : "",
               c->epilogues[i].note ? c->epilogues[i].note : "");
    for (size_t i = 0; i < c->n_library_uses; i++)
        printf("  declared library use: %s %s%s%s\n", c->library_uses[i].library, c->library_uses[i].api,
               c->library_uses[i].cls >= 0 ? " class " : "",
               c->library_uses[i].cls >= 0 ? ka_class_name(c->library_uses[i].cls) : "");
    if (c->measure_reference)
        printf("  reference work: measured in the reference phase\n");
    else if (c->dominant_class >= 0)
        printf("  reference work: %.4g (%s)\n", c->reference_work, ka_class_name(c->dominant_class));
    printf("  degenerate reference: %s\n", c->degenerate_reference ? "yes (PASS withheld)" : "no");
    printf("  timing: %s%s%s\n", c->timing == KA_TIMING_NONE ? "none" : "cuda_events",
           c->timing_dtype ? ", dtype " : "", c->timing_dtype ? c->timing_dtype : "");
    printf("  phases: candidate '%s', reference '%s'\n", c->phase_candidate, c->phase_reference);
    for (size_t i = 0; i < c->candidate.n_objects; i++)
        printf("  candidate object: %s\n", c->candidate.objects[i]);
    for (size_t i = 0; i < c->candidate.n_processes; i++)
        printf("  candidate process: %s\n", c->candidate.processes[i]);
    for (size_t i = 0; i < c->n_inputs; i++) {
        printf("  input %s: %s [", c->inputs[i].name, c->inputs[i].dtype);
        for (size_t d = 0; d < c->inputs[i].rank; d++)
            printf("%s%lld", d ? ", " : "", (long long)c->inputs[i].shape[d]);
        printf("]");
        if (c->inputs[i].has_range)
            printf(" in [%g, %g]", c->inputs[i].range_lo, c->inputs[i].range_hi);
        printf("\n");
    }
}

static int contract_new_command(int argc, char **argv)
{
    const char *reference = NULL, *out = NULL, *manifest = NULL, *device = "cpu";
    const char *python = getenv("KAUDIT_PYTHON");
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        if (i + 1 >= argc && o[0] == '-')
            return cli_bad_option(contract_usage, 1, o);
        if (!strcmp(o, "--reference"))
            reference = argv[++i];
        else if (!strcmp(o, "-o") || !strcmp(o, "--output"))
            out = argv[++i];
        else if (!strcmp(o, "--manifest"))
            manifest = argv[++i];
        else if (!strcmp(o, "--python"))
            python = argv[++i];
        else if (!strcmp(o, "--device"))
            device = argv[++i];
        else
            return cli_bad_option(contract_usage, 0, o);
    }
    if (!reference)
        return cli_usage_error(contract_usage, "contract new needs --reference");
    if (strcmp(device, "cpu") && strcmp(device, "cuda"))
        return cli_usage_error(contract_usage, "--device takes cpu or cuda, not '%s'", device);
    if (!python || !*python)
        python = "python3";
    char out_buf[PATH_MAX], manifest_buf[PATH_MAX + 16];
    if (!out) {
        const char *base = strrchr(reference, '/');
        snprintf(out_buf, sizeof out_buf, "%s", base ? base + 1 : reference);
        char *dot = strrchr(out_buf, '.');
        if (dot)
            *dot = '\0';
        strncat(out_buf, ".json", sizeof out_buf - strlen(out_buf) - 1);
        out = out_buf;
    }
    if (!manifest) {
        snprintf(manifest_buf, sizeof manifest_buf, "%s", out);
        char *slash = strrchr(manifest_buf, '/');
        if (slash)
            snprintf(slash + 1, sizeof manifest_buf - (size_t)(slash + 1 - manifest_buf), "manifest.json");
        else
            snprintf(manifest_buf, sizeof manifest_buf, "manifest.json");
        manifest = manifest_buf;
    }
    char err[4096];
    if (contract_new_from_reference(reference, out, manifest, python, device, 300, err, sizeof err) != 0) {
        cli_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    printf("wrote %s from %s and pinned it in %s\n", out, reference, manifest);
    return KAUDIT_EXIT_OK;
}

int cmd_contract(int argc, char **argv)
{
    char err[2048];
    if (argc < 2)
        return cli_usage_error(contract_usage, "contract needs a command (check, pin, show)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(contract_usage, stdout);
        return KAUDIT_EXIT_OK;
    }
    if (!strcmp(argv[1], "check")) {
        if (argc > 3)
            return cli_usage_error(contract_usage, "contract check takes at most one manifest");
        const char *manifest = argc == 3 ? argv[2] : "contracts/manifest.json";
        size_t n = 0;
        if (ka_manifest_check(manifest, print_problem, NULL, &n, err, sizeof err) != 0) {
            cli_error("%s", err);
            return KAUDIT_EXIT_ERROR;
        }
        printf("%zu contracts verify against %s\n", n, manifest);
        return KAUDIT_EXIT_OK;
    }
    if (!strcmp(argv[1], "pin")) {
        if (argc < 4)
            return cli_usage_error(contract_usage, "contract pin takes a manifest and at least one contract");
        if (ka_manifest_pin(argv[2], (const char *const *)argv + 3, (size_t)argc - 3, err, sizeof err) != 0) {
            cli_error("%s", err);
            return KAUDIT_EXIT_ERROR;
        }
        printf("pinned %d contract%s in %s\n", argc - 3, argc == 4 ? "" : "s", argv[2]);
        return KAUDIT_EXIT_OK;
    }
    if (!strcmp(argv[1], "show")) {
        const char *file = NULL, *manifest = NULL;
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--manifest") && i + 1 < argc)
                manifest = argv[++i];
            else if (!file && argv[i][0] != '-')
                file = argv[i];
            else if (argv[i][0] == '-')
                return cli_bad_option(contract_usage, !strcmp(argv[i], "--manifest"), argv[i]);
            else
                return cli_usage_error(contract_usage, "contract show takes one contract, got '%s' and '%s'",
                                       file, argv[i]);
        }
        if (!file)
            return cli_usage_error(contract_usage, "contract show needs a contract");
        struct ka_contract *c;
        if (ka_contract_load(file, manifest, &c, err, sizeof err) != 0) {
            cli_error("%s", err);
            return KAUDIT_EXIT_ERROR;
        }
        show(c);
        ka_contract_free(c);
        return KAUDIT_EXIT_OK;
    }
    if (!strcmp(argv[1], "new"))
        return contract_new_command(argc, argv);
    return cli_usage_error(contract_usage, "unknown contract command '%s'", argv[1]);
}
