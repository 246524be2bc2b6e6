/*
 * kaudit.c - the command line: one table of subcommands, each in its own
 * cmd_<name>.c.  The CLI only parses and delegates.
 *
 * To add a command: write `int cmd_<name>(int argc, char **argv)` (argv[0]
 * is the command name), declare it in commands.h, and add a row below.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "trace_format.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

/* `kaudit version`: the tool and the trace format versions it handles. */
static int cmd_version(int argc, char **argv)
{
    (void)argv;
    if (argc > 1)
        return cli_usage_error("usage: kaudit version\n", "version takes no arguments");
    printf("kaudit %s\n", KAUDIT_VERSION);
    printf("trace format: writes version %u, reads versions %u to %u\n", KAT_FORMAT_VERSION,
           KAT_FORMAT_MIN_READABLE, KAT_FORMAT_VERSION);
    return KAUDIT_EXIT_OK;
}

static const struct command commands[] = {
    { "run", cmd_run, "run a command under the preload library and CUPTI, recording a session" },
    { "confine", cmd_confine, "run a command confined on its own (the audit's candidate process)" },
    { "dump", cmd_dump, "print what a recorded session holds" },
#ifdef KAUDIT_HAVE_ANALYZER
    { "analyze", cmd_analyze, "judge a recorded session against a task contract: axis verdicts and certificate" },
    { "report", cmd_report, "explain an analysis with its evidence (text, JSON, Perfetto timeline)" },
    { "verify", cmd_verify, "check a recorded session against its seal" },
    { "audit", cmd_audit, "audit a candidate against its reference: stress runs, all three axes, the certificate" },
    { "contract", cmd_contract, "check and pin task contracts" },
    { "validators", cmd_validators, "score weak validators on audited records: false accepts, misses, paired tests" },
    { "gates", cmd_gates, "selection gates over a pool of tasks x slots: coverage, unsafe deliveries, SafeFast" },
    { "ledger", cmd_ledger, "merge the ledgers of a batch's shards, refusing duplicates and conflicts" },
    { "demo", cmd_demo, "judge two sessions recorded on an H200 that kaudit ships (no paths needed)" },
#endif
#ifdef KAUDIT_HAVE_INVENTORY
    { "inventory", cmd_inventory, "build, verify and query vendor kernel inventories" },
#endif
    { "version", cmd_version, "print the version and the trace format versions read and written" },
};

static void usage(FILE *out)
{
    fprintf(out, "usage: kaudit <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'kaudit <command> --help' describes one command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return KAUDIT_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return KAUDIT_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version"))
        return cmd_version(1, argv + 1);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (!strcmp(argv[1], commands[i].name)) {
            int rc = commands[i].run(argc - 1, argv + 1);
            if (fflush(stdout) != 0 || ferror(stdout)) {
                cli_error("cannot write to standard output");
                return rc ? rc : KAUDIT_EXIT_ERROR;
            }
            return rc;
        }
    }
    cli_error("unknown command '%s'", argv[1]);
    fputs("usage: kaudit <command> [options] (kaudit --help for the commands)\n", stderr);
    return KAUDIT_EXIT_USAGE;
}
