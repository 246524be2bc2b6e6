/*
 * cmd_verify.c - `kaudit verify DIR`: check a session against its seal
 * (session_seal.h).  Exit 0 intact, 1 broken or unreadable, 11 not sealed.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "session_seal.h"

static const char verify_usage[] =
    "usage: kaudit verify SESSION_DIR\n"
    "\n"
    "Checks the session against the seal `kaudit run` wrote when the command ended:\n"
    "every file (info, the traces, kaudit.log) with its size and XXH3-128 digest.\n"
    "Exit 0: intact (the chain digest is printed); 1: a file was changed, removed or\n"
    "added after the run, or the seal is unreadable; 11: the session has no seal.\n";

int cmd_verify(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(verify_usage, stdout);
        return KAUDIT_EXIT_OK;
    }
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage_error(verify_usage, argc < 2 ? "verify needs a session directory"
                                                      : "verify takes one session directory");
    char chain[33], err[4096];
    int rc = session_seal_verify(argv[1], chain, err, sizeof err);
    if (rc < 0) {
        cli_error("%s", err);
        return KAUDIT_EXIT_ERROR;
    }
    if (rc == 1) {
        printf("%s: not sealed (recorded by an older or core-only kaudit)\n", argv[1]);
        return KAUDIT_EXIT_INCONCLUSIVE;
    }
    printf("%s: intact, chain %s\n", argv[1], chain);
    return KAUDIT_EXIT_OK;
}
