/*
 * prog_short_untraced.c - the short untraced process (docs/threat-model.md,
 * "run work in a process kaudit does not trace"): with SIGCHLD ignored, so
 * that the kernel reaps the child at once and no zombie is left to be seen,
 * a raw clone and execve with an empty environment (no LD_PRELOAD: no
 * wrapper sees it, and the preload is not loaded) of PROGRAM, which ends
 * within a few milliseconds.  The parent then stays COUNT x 20 ms so that
 * kaudit run's census has time to look, and exits 0.
 *
 * With --traced-fork the child is made by libc's fork instead, so that the
 * preload's fork handler gives it a trace of its own before it execs the
 * program untraced: the trace must not count for the program.
 *
 * prog_short_untraced [--traced-fork] [PROGRAM [COUNT]]   (default /bin/true, 10)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* fork as the kernel sees it, not through libc (no pthread_atfork
 * handler runs, so the preload's fork handling does not either) */
static long raw_fork(void)
{
#ifdef SYS_fork
    return syscall(SYS_fork);
#else
    return syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
#endif
}

int main(int argc, char **argv)
{
    int traced_fork = argc > 1 && !strcmp(argv[1], "--traced-fork");
    argv += traced_fork;
    argc -= traced_fork;
    const char *program = argc > 1 ? argv[1] : "/bin/true";
    int count = argc > 2 ? atoi(argv[2]) : 10;
    signal(SIGCHLD, SIG_IGN);
    long pid = traced_fork ? (long)fork() : raw_fork();
    if (pid == 0) {
        char *child_argv[] = { (char *)program, NULL };
        char *empty_env[] = { NULL };
        syscall(SYS_execve, program, child_argv, empty_env);
        syscall(SYS_exit_group, 127);
    }
    if (pid < 0) {
        perror("prog_short_untraced: fork");
        return 1;
    }
    for (int i = 0; i < count; i++) {
        struct timespec step = { 0, 20 * 1000 * 1000 };
        nanosleep(&step, NULL);
    }
    printf("started %ld\n", pid);
    return 0;
}
