/*
 * cmd_judge_options.c - the options `kaudit analyze` and `kaudit report`
 * share (judge_parse, audit/judge.h); the judging itself is audit/judge.c.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "judge.h"

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

