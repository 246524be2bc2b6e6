/* cmd_confine.c - `kaudit confine`: runs a command in a process confined on
 * its own (supervisor/party_confine.h); the audit's runner starts the
 * candidate's process with it (docs/audit.md, "Two parties, two processes"). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "party_confine.h"

#define CONFINE_USAGE                                                                                                \
    "usage: kaudit confine [--read DIR]... [--write DIR]... [--report-fd N] -- COMMAND [ARG...]\n"                   \
    "\n"                                                                                                             \
    "Runs COMMAND with no_new_privs, a Landlock domain that reads only beneath the --read\n"                         \
    "directories and writes only beneath the --write ones (and its own /proc/PID), no TCP,\n"                        \
    "no signal or abstract socket outside it where the kernel's Landlock can say so, and\n"                          \
    "a seccomp filter refusing ptrace, process_vm_*, perf_event_open, bpf, kexec, modules,\n"                        \
    "mount, keyrings, namespaces and seccomp filters of its own.  What was put in force\n"                           \
    "is one JSON line on descriptor N (default: stderr); a mechanism this machine lacks\n"                           \
    "is named there and COMMAND runs anyway.\n"

enum { MAX_ROOTS = 256 };

int cmd_confine(int argc, char **argv)
{
    static const struct option opts[] = { { "read", required_argument, NULL, 'r' },
                                           { "write", required_argument, NULL, 'w' },
                                           { "report-fd", required_argument, NULL, 'f' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    static const char *reads[MAX_ROOTS], *writes[MAX_ROOTS];
    struct party_confine p = { .read_roots = reads, .write_roots = writes, .report_fd = -1 };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
        case 'w': {
            size_t *count = c == 'r' ? &p.n_read : &p.n_write;
            if (*count == MAX_ROOTS)
                return cli_usage_error(CONFINE_USAGE, "more than %d --%s directories", MAX_ROOTS,
                                       c == 'r' ? "read" : "write");
            (c == 'r' ? reads : writes)[(*count)++] = optarg;
            break;
        }
        case 'f': {
            char *end;
            long fd = strtol(optarg, &end, 10);
            if (*end || fd < 0 || fd > 1 << 20)
                return cli_usage_error(CONFINE_USAGE, "--report-fd takes a descriptor number, not '%s'", optarg);
            p.report_fd = (int)fd;
            break;
        }
        case 'h':
            fputs(CONFINE_USAGE, stdout);
            return KAUDIT_EXIT_OK;
        default:
            return cli_bad_option(CONFINE_USAGE, c == ':', argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(CONFINE_USAGE, "no command to run (after --)");
    p.argv = argv + optind;
    char err[512];
    party_confine_exec(&p, err, sizeof err);
    cli_error("%s", err);
    return 127;
}
