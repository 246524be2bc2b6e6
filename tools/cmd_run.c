/*
 * cmd_run.c - `kaudit run [-d DIR] -- CMD [ARGS...]`
 *
 * Runs CMD unmodified with the preload library in LD_PRELOAD, as the CUDA
 * driver's injection library (CUPTI) and as the NVTX injection library, and
 * records a session directory.  This file parses the options; the recorded
 * run is supervise() (supervisor/).  The exit status is CMD's, or 128+N
 * when CMD was killed by signal N.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "kaudit_env.h"
#include "supervise.h"


#define RUN_SYNOPSIS "usage: kaudit run [options] -- CMD [ARGS...]"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: kaudit run [-d DIR] [--overwrite] [--cupti LIB] [--python-watch NAMES]\n"
            "                  [--no-python] [--exact-event-times] [-v] -- CMD [ARGS...]\n"
            "\n"
            "Run CMD unmodified under the KernelAudit preload library and CUPTI and record\n"
            "one trace per process in the session directory DIR (default: kaudit.session, or\n"
            "kaudit-N.session for the Nth when earlier ones exist here).\n"
            "\n"
            "  -d, --dir DIR     session directory to create (an existing session there is an\n"
            "                    error unless --overwrite)\n"
            "      --overwrite   replace an existing session in DIR (without -d: in\n"
            "                    kaudit.session)\n"
            "      --cupti LIB   libcupti to use when the program has not loaded one\n"
            "      --python-watch NAMES  comma-separated class or function names whose frames\n"
            "                    Python processes report (default ModelNew,Model; see\n"
            "                    docs/python-provenance.md)\n"
            "      --no-python   do not put kaudit's sitecustomize on PYTHONPATH (also\n"
            "                    KAUDIT_NO_PYTHON=1)\n"
            "      --exact-event-times  also record CUPTI's CUDA_EVENT and SYNCHRONIZATION\n"
            "                    activity: exact GPU times of event records, at a cost on\n"
            "                    every kernel launch (also KAUDIT_EXACT_EVENT_TIMES=1;\n"
            "                    docs/overhead.md)\n"
            "      --write-root DIR  confine the command's writes beneath DIR (Landlock;\n"
            "                    repeatable, up to 24): kaudit audit's worker\n"
            "      --create-root DIR  beneath DIR the command may only make files, not\n"
            "                    write, remove or rename them (counts with --write-root)\n"
            "      --worker-uid U  run CMD as uid and gid U with no capabilities (kaudit as\n"
            "                    root); CMD is not run when that cannot be done\n"
            "      --bind AT=DIR  CMD sees directory DIR at AT too (a bind mount in its own\n"
            "                    mount namespace; AT exists and has no '='): kaudit audit's\n"
            "                    build caches; CMD is not run when that cannot be done\n"
            "  -v, --verbose     print a summary of the session on stderr at the end\n"
            "\n"
            "The exit status is CMD's, or 128+N if CMD was killed by signal N.\n");
}

static int run_usage_error(const char *fmt, const char *arg)
{
    cli_error(fmt, arg);
    fputs(RUN_SYNOPSIS " (kaudit run --help for more)\n", stderr);
    return KAUDIT_EXIT_USAGE;
}

static int run_command(int argc, char **argv)
{
    const char *dir = NULL; /* -d, else numbered (session_name.h) */
    const char *cupti = getenv(KAT_ENV_CUPTI);
    int overwrite = 0, verbose = 0;
    long worker_uid = 0;
    static char bind_at[PATH_MAX];
    const char *bind_dir = NULL;
    const char *write_roots[33];
    unsigned char create_only[33] = { 0 };
    size_t n_write_roots = 0;
    int no_python = kat_env_flag("KAUDIT_NO_PYTHON", 0);
    const char *python_watch = getenv("KAUDIT_PYTHON_WATCH");
    if (!python_watch || !python_watch[0])
        python_watch = "ModelNew,Model";
    static const struct option options[] = {
        { "dir", required_argument, NULL, 'd' },
        { "overwrite", no_argument, NULL, 'O' },
        { "cupti", required_argument, NULL, 'C' },
        { "verbose", no_argument, NULL, 'v' },
        { "python-watch", required_argument, NULL, 'W' },
        { "no-python", no_argument, NULL, 'N' },
        { "exact-event-times", no_argument, NULL, 'E' },
        { "write-root", required_argument, NULL, 'R' },
        { "create-root", required_argument, NULL, 'K' },
        { "worker-uid", required_argument, NULL, 'U' },
        { "bind", required_argument, NULL, 'B' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0;
    optind = 1;
    int c;
    /* '+': stop at the first non-option, which starts CMD. */
    while ((c = getopt_long(argc, argv, "+d:vh", options, NULL)) != -1) {
        switch (c) {
        case 'd': dir = optarg; break;
        case 'O': overwrite = 1; break;
        case 'C': cupti = optarg; break;
        case 'v': verbose = 1; break;
        case 'W': python_watch = optarg; break;
        case 'N': no_python = 1; break;
        /* Read by the preload (cupti_kinds.c); the child inherits our environment. */
        case 'E': setenv("KAUDIT_EXACT_EVENT_TIMES", "1", 1); break;
        case 'R':
        case 'K':
            if (n_write_roots == 32)
                return run_usage_error("--write-root and --create-root are given more than 32 times", NULL);
            create_only[n_write_roots] = c == 'K';
            write_roots[n_write_roots++] = optarg;
            break;
        case 'U': {
            char *end;
            worker_uid = strtol(optarg, &end, 10);
            if (*end || worker_uid <= 0 || worker_uid >= 4294967295L)
                return run_usage_error("--worker-uid takes a uid other than 0, not '%s'", optarg);
            break;
        }
        case 'B': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1] || (size_t)(eq - optarg) >= sizeof bind_at)
                return run_usage_error("--bind takes AT=DIR, not '%s'", optarg);
            snprintf(bind_at, sizeof bind_at, "%.*s", (int)(eq - optarg), optarg);
            bind_dir = eq + 1;
            break;
        }
        case 'h': usage(stdout); return 0;
        case ':': return run_usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return run_usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return run_usage_error("no command to run", NULL);
    struct supervise_options o = { .dir = dir, .overwrite = overwrite, .cupti = cupti, .verbose = verbose,
                                   .write_roots = write_roots, .create_only = create_only,
                                   .n_write_roots = n_write_roots, .no_python = no_python,
                                   .python_watch = python_watch, .command = argv + optind,
                                   .worker_uid = worker_uid, .bind_dir = bind_dir,
                                   .bind_at = bind_dir ? bind_at : NULL };
    char claimed[64];
    int rc = supervise(&o, claimed, sizeof claimed);
    if (claimed[0]) /* not named by -d: say which one */
        cli_note("session written to %s", claimed);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    return run_command(argc, argv);
}
