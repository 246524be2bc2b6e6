/*
 * cmd_demo.c - `kaudit demo`: judges two sessions recorded on an H200 that
 * kaudit ships (examples/controls/, docs/controls.md), with no path typed by
 * hand: the sessions, contracts and inventory are found through the resolver
 * (resources.h) in the build tree and in an install.
 *
 *   timing_thread       analyze, contract controls/add.json, weak ACCEPT
 *   deleg_torch_matmul  report,  contract controls/matmul.json, weak ACCEPT
 *
 * Exit status: 0 when both certificates come out FAIL, as recorded in
 * docs/controls.md; 1 otherwise (or when the data cannot be found).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "resources.h"

#ifdef KAUDIT_HAVE_ANALYZER

static const char demo_usage[] =
    "usage: kaudit demo\n"
    "\n"
    "Judge two sessions recorded on an NVIDIA H200 that kaudit ships: a candidate\n"
    "that finishes its add on a thread after the harness's stop event\n"
    "(examples/controls/timing_thread) and one that hands its GEMM to torch.matmul\n"
    "(examples/controls/deleg_torch_matmul).  The harness's weak check accepted both;\n"
    "kaudit fails both.  The data is found beside the binary (share/kaudit in an\n"
    "install, the source tree from a build directory; KAUDIT_DATA_DIR overrides),\n"
    "and each command is printed as it runs there.\n"
    "\n"
    "Exit status: 0 when both certificates are FAIL, as recorded; 1 otherwise.\n";

/* Prints "$ kaudit ARGS..." and runs one command of the table in-process. */
static int demo_step(int (*cmd)(int, char **), int argc, char **argv)
{
    printf("$ kaudit");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n");
    fflush(stdout);
    int rc = cmd(argc, argv);
    fflush(stdout);
    return rc;
}

int cmd_demo(int argc, char **argv)
{
    if (argc > 1) {
        int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
        if (!help)
            cli_error("'kaudit demo' takes no arguments");
        fputs(demo_usage, help ? stdout : stderr);
        return help ? 0 : 2;
    }
    char root[PATH_MAX];
    if (kres_data_dir(root, sizeof root) != 0) {
        cli_error("cannot find kaudit's data (share/kaudit beside the binary's directory, or set %s)",
                  KAUDIT_ENV_DATA_DIR);
        return 1;
    }
    /* Relative paths in what is printed, the same in every tree. */
    if (chdir(root) != 0) {
        cli_error("cannot enter '%s'", root);
        return 1;
    }
    cli_note("demo data in %s", root);
    char *analyze[] = { "analyze", "examples/controls/timing_thread/session",
                        "--contract", "contracts/controls/add.json",
                        "--inventory", KAUDIT_BUNDLED_INVENTORY,
                        "--weak", "ACCEPT", NULL };
    char *report[] = { "report", "examples/controls/deleg_torch_matmul/session",
                       "--contract", "contracts/controls/matmul.json",
                       "--inventory", KAUDIT_BUNDLED_INVENTORY,
                       "--weak", "ACCEPT", NULL };
    int first = demo_step(cmd_analyze, 8, analyze);
    printf("\n");
    int second = demo_step(cmd_report, 8, report);
    if (first != 10 || second != 10) {
        cli_error("the demo expected two FAIL certificates (exit 10), got exit %d and %d", first, second);
        return 1;
    }
    return 0;
}

#endif /* KAUDIT_HAVE_ANALYZER */
