/*
 * prog_proc.c - process and thread life cycles on the stand-in CUDA stack.
 *
 *   prog_proc fork             three fork children launch kernels (the parent
 *                              touches CUDA only after they are gone, as CUDA
 *                              requires); child 0 exits 10, child 1 exits 11,
 *                              child 2 dies of SIGTERM; the parent reaps them
 *                              in order, prints their statuses and launches a
 *                              kernel itself
 *   prog_proc fork-after-init  launches kernels, then forks a child that exits
 *                              without using CUDA (it only checks that CUDA
 *                              refuses to work in it, as it must after fork)
 *   prog_proc exec LOG         launches a kernel, then execs itself with the
 *                              scrubbed environment {"PATH=/usr/bin:/bin"}
 *   prog_proc spawn LOG        posix_spawn()s itself with the same environment
 *   prog_proc spawn-scrubbed LOG   posix_spawn()s itself with {"PATH=..."}
 *   prog_proc threads          four threads, each on its own stream, each with
 *                              its own kernels and a cublasSgemm_v2
 *   prog_proc close-fds FILE   launches a kernel, closes every descriptor from
 *                              3 to 1023 (but the stand-in's ground-truth log,
 *                              which is test machinery), opens FILE (it gets a
 *                              number the preload used), writes a known string,
 *                              launches CLOSE_FDS_KERNELS kernels (the trace
 *                              needs at least two more segments), closes FILE
 *                              and exits 0 only if it holds exactly that string
 *   prog_proc exit-while-launching
 *                              launches a kernel, starts EXIT_RACE_THREADS
 *                              threads that launch kernels without end (their
 *                              records cross segment after segment, so a
 *                              spare segment is often being prepared), lets
 *                              them run EXIT_RACE_MS and exits 0 while they
 *                              still launch
 *   prog_proc abort | segv | sigkill | _exit | exit:N | nosync-kill
 *                              launch three kernels, synchronise (not for
 *                              nosync-kill), then die that way
 *
 * LOG is the ground-truth log (STANDIN_LAUNCH_LOG) handed to children whose
 * environment is scrubbed; "-" for none.  stdout is deterministic.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cublas_v2.h>

#include "prog_common.h"

extern char **environ;

static char self_path[4096];

static void find_self(void)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0) {
        perror("readlink /proc/self/exe");
        exit(2);
    }
    self_path[n] = '\0';
}

static void use_log(const char *log)
{
    if (log && strcmp(log, "-") != 0)
        setenv("STANDIN_LAUNCH_LOG", log, 1);
}

/* Launch `count` kernels on a fresh buffer and return its checksum line. */
static void launch_some(const char *what, int count, cudaStream_t stream, int print)
{
    const int n = 256;
    float *h = malloc(n * sizeof(float)), *d;
    prog_fill(h, (size_t)n, (unsigned)count + 40);
    CHECK_CUDA(cudaMalloc((void **)&d, n * sizeof(float)));
    CHECK_CUDA(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, stream));
    for (int i = 0; i < count; i++)
        prog_launch_scale(d, n, 0.5f + (float)i, stream);
    CHECK_CUDA(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (print)
        prog_print(what, h, (size_t)n);
    cudaFree(d);
    free(h);
}

static void describe(const char *who, int status)
{
    if (WIFEXITED(status))
        printf("%s exited %d\n", who, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%s killed by signal %d\n", who, WTERMSIG(status));
    else
        printf("%s status %#x\n", who, status);
}

static int mode_fork(void)
{
    pid_t pids[3];
    fflush(stdout);
    for (int i = 0; i < 3; i++) {
        pid_t p = fork();
        if (p < 0) {
            perror("fork");
            return 2;
        }
        if (p == 0) {
            launch_some("child", 2 + i, 0, 0);
            CHECK_CUDA(cudaDeviceSynchronize());
            if (i == 2)
                raise(SIGTERM);
            exit(10 + i);
        }
        pids[i] = p;
    }
    for (int i = 0; i < 3; i++) {
        int status;
        if (waitpid(pids[i], &status, 0) != pids[i]) {
            perror("waitpid");
            return 2;
        }
        char who[32];
        snprintf(who, sizeof who, "child %d", i);
        describe(who, status);
    }
    launch_some("parent", 1, 0, 1);
    return 0;
}

static int mode_fork_after_init(void)
{
    launch_some("parent before fork", 2, 0, 1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        void *p = NULL;
        cudaError_t e = cudaMalloc(&p, 16);
        printf("child: cudaMalloc after fork -> %d\n", (int)e);
        exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 2;
    }
    describe("child", status);
    launch_some("parent after fork", 1, 0, 1);
    return 0;
}

static int mode_exec(const char *log)
{
    launch_some("before exec", 1, 0, 1);
    fflush(stdout);
    char *argv[] = { self_path, "after-exec", (char *)(log ? log : "-"), NULL };
    char *envp[] = { "PATH=/usr/bin:/bin", NULL };
    execve(self_path, argv, envp);
    perror("execve");
    return 2;
}

static int mode_after_exec(const char *log)
{
    use_log(log);
    launch_some("after exec", 2, 0, 1);
    return 0;
}

static int mode_spawn(const char *log, int scrubbed)
{
    char *argv[] = { self_path, "spawned", (char *)(log ? log : "-"), NULL };
    char *envp[] = { "PATH=/usr/bin:/bin", NULL };
    pid_t pid;
    fflush(stdout);
    int rc = posix_spawn(&pid, self_path, NULL, NULL, argv, scrubbed ? envp : environ);
    if (rc != 0) {
        fprintf(stderr, "posix_spawn: %s\n", strerror(rc));
        return 2;
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 2;
    }
    describe("spawned child", status);
    return 0;
}

static int mode_spawned(const char *log)
{
    use_log(log);
    launch_some("spawned", 2, 0, 1);
    fflush(stdout);
    return 7;
}

#define THREADS 4
#define THREAD_KERNELS 5

struct thread_work {
    int index;
    float result[64];
    float *gemm;                /* device, 8 x 8 */
    float gemm_host[64];
};

static void *thread_main(void *arg)
{
    struct thread_work *w = arg;
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    float *d;
    prog_fill(w->result, 64, (unsigned)w->index + 50);
    CHECK_CUDA(cudaMalloc((void **)&d, sizeof w->result));
    CHECK_CUDA(cudaMalloc((void **)&w->gemm, sizeof w->gemm_host));
    CHECK_CUDA(cudaMemcpyAsync(d, w->result, sizeof w->result, cudaMemcpyHostToDevice, s));
    for (int i = 0; i < THREAD_KERNELS; i++)
        prog_launch_scale(d, 64, 1.0f + 0.25f * (float)w->index, s);
    /* and a cuBLAS call per thread, on the thread's stream: 8 x 8 = (8 x 4)(4 x 8) */
    cublasHandle_t h;
    CHECK_STATUS(cublasCreate(&h));
    CHECK_STATUS(cublasSetStream(h, s));
    float alpha = 1.0f, beta = 0.0f;
    CHECK_STATUS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 4, &alpha, d, 8, d + 32, 4, &beta, w->gemm, 8));
    CHECK_CUDA(cudaMemcpyAsync(w->result, d, sizeof w->result, cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaMemcpyAsync(w->gemm_host, w->gemm, sizeof w->gemm_host, cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_STATUS(cublasDestroy(h));
    CHECK_CUDA(cudaStreamDestroy(s));
    cudaFree(d);
    cudaFree(w->gemm);
    return NULL;
}

static int mode_threads(void)
{
    pthread_t t[THREADS];
    struct thread_work w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i].index = i;
        if (pthread_create(&t[i], NULL, thread_main, &w[i]) != 0) {
            perror("pthread_create");
            return 2;
        }
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        char what[32];
        snprintf(what, sizeof what, "thread %d", i);
        prog_print(what, w[i].result, 64);
        snprintf(what, sizeof what, "thread %d sgemm", i);
        prog_print(what, w[i].gemm_host, 64);
    }
    return 0;
}

/* The trace writer maps 4 MiB segments (SEGMENT_BYTES in
 * preload/trace_writer.c) and a KERNEL record takes 112 bytes with its
 * header, before the API records around each launch: 100000 launches are
 * more than 10 MiB of records, so at least two segments after the first. */
#define CLOSE_FDS_KERNELS 100000
static const char own_text[] = "the program's own file, not the trace\n";

/* close_range(first, last, 0) where the kernel has it, else one by one. */
static void close_fds(int first, int last)
{
    if (first > last)
        return;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, (unsigned)last, 0u) == 0)
        return;
#endif
    for (int fd = first; fd <= last; fd++)
        close(fd);
}

/* The descriptor of the stand-in's ground-truth log, -1 if none is open. */
static int truth_log_fd(void)
{
    const char *log = getenv("STANDIN_LAUNCH_LOG");
    char want[PATH_MAX];
    if (!log || !realpath(log, want))
        return -1;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && found < 0) {
        char link[300], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, want) == 0)
            found = atoi(e->d_name);
    }
    closedir(d);
    return found;
}

static int mode_close_fds(const char *path)
{
    if (!path) {
        fprintf(stderr, "close-fds needs a file\n");
        return 2;
    }
    launch_some("before close", 1, 0, 1);
    fflush(stdout);
    /* Like a daemon or a sandbox: close everything inherited or opened by
     * libraries.  The ground-truth log is the test's, so it stays. */
    int keep = truth_log_fd();
    if (keep >= 3) {
        close_fds(3, keep - 1);
        close_fds(keep + 1, 1023);
    } else {
        close_fds(3, 1023);
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    if (write(fd, own_text, sizeof own_text - 1) != (ssize_t)(sizeof own_text - 1)) {
        perror("write");
        return 2;
    }
    const int n = 128;
    float *d;
    CHECK_CUDA(cudaMalloc((void **)&d, n * sizeof(float)));
    CHECK_CUDA(cudaMemset(d, 0, n * sizeof(float)));
    for (int i = 0; i < CLOSE_FDS_KERNELS; i++)
        prog_launch_scale(d, n, 1.0f, 0);
    CHECK_CUDA(cudaDeviceSynchronize());
    cudaFree(d);
    close(fd);

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    static char buf[1 << 16];
    ssize_t got = read(fd, buf, sizeof buf - 1);
    off_t size = lseek(fd, 0, SEEK_END);
    close(fd);
    if (got == (ssize_t)(sizeof own_text - 1) && size == got && memcmp(buf, own_text, (size_t)got) == 0) {
        printf("own file intact after %d kernels\n", CLOSE_FDS_KERNELS);
        return 0;
    }
    printf("own file damaged: %lld bytes, starts with:", (long long)size);
    for (ssize_t i = 0; i < got && i < 48; i++)
        printf(" %02x", (unsigned char)buf[i]);
    printf("\n");
    return 1;
}

#define EXIT_RACE_THREADS 3
#define EXIT_RACE_MS 300

/* Until a launch fails: the exit tears the context down under it. */
static void *launch_without_end(void *arg)
{
    (void)arg;
    int n = 64;
    float *d, s = 1.0f;
    if (cudaMalloc((void **)&d, n * sizeof(float)) != cudaSuccess)
        return NULL;
    void *args[] = { &d, &n, &s };
    dim3 grid = { 1, 1, 1 }, block = { 128, 1, 1 };
    while (cudaLaunchKernel(&prog_scale_stub, grid, block, args, 0, 0) == cudaSuccess)
        ;
    return NULL;
}

/* The preload's thread that maps trace segments ahead ("kaudit-spare"),
 * starved: SCHED_IDLE on the one CPU the launching threads keep busy, as on
 * a loaded machine, so that it is often half-way through a segment when the
 * process ends.  0 when it was found and starved. */
static int starve_spare_thread(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && found < 0) {
        char path[300], name[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(name, sizeof name, f) && strncmp(name, "kaudit-spare", 12) == 0) {
            struct sched_param none = { 0 };
            found = sched_setscheduler(atoi(e->d_name), SCHED_IDLE, &none);
        }
        fclose(f);
    }
    closedir(d);
    return found;
}

static int mode_exit_while_launching(void)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
    sched_setaffinity(0, sizeof one, &one);   /* inherited by every thread started from here */
    launch_some("before the threads", 1, 0, 1);
    /* the thread names itself once it runs */
    int starved = -1;
    for (int tries = 0; tries < 200 && starved != 0; tries++)
        if ((starved = starve_spare_thread()) != 0)
            usleep(1000);
    for (int i = 0; i < EXIT_RACE_THREADS; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, launch_without_end, NULL) != 0) {
            perror("pthread_create");
            return 2;
        }
    }
    usleep(EXIT_RACE_MS * 1000);
    printf("exiting while %d threads launch\n", EXIT_RACE_THREADS);
    fflush(stdout);
    _exit(0);
}

static int mode_die(const char *how)
{
    launch_some("before death", 3, 0, 1);
    if (strcmp(how, "nosync-kill") != 0)
        CHECK_CUDA(cudaDeviceSynchronize());
    printf("dying by %s\n", how);
    fflush(stdout);
    if (!strcmp(how, "abort"))
        abort();
    if (!strcmp(how, "segv"))
        raise(SIGSEGV);
    if (!strcmp(how, "sigkill") || !strcmp(how, "nosync-kill"))
        kill(getpid(), SIGKILL);
    if (!strcmp(how, "_exit"))
        _exit(3);
    if (!strncmp(how, "exit:", 5))
        exit(atoi(how + 5));
    fprintf(stderr, "unknown way to die '%s'\n", how);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODE [LOG]\n", argv[0]);
        return 2;
    }
    find_self();
    prog_register_kernels();
    const char *mode = argv[1], *log = argc > 2 ? argv[2] : NULL;
    if (!strcmp(mode, "fork"))
        return mode_fork();
    if (!strcmp(mode, "fork-after-init"))
        return mode_fork_after_init();
    if (!strcmp(mode, "exec"))
        return mode_exec(log);
    if (!strcmp(mode, "after-exec"))
        return mode_after_exec(log);
    if (!strcmp(mode, "spawn"))
        return mode_spawn(log, 0);
    if (!strcmp(mode, "spawn-scrubbed"))
        return mode_spawn(log, 1);
    if (!strcmp(mode, "spawned"))
        return mode_spawned(log);
    if (!strcmp(mode, "threads"))
        return mode_threads();
    if (!strcmp(mode, "close-fds"))
        return mode_close_fds(log);
    if (!strcmp(mode, "exit-while-launching"))
        return mode_exit_while_launching();
    return mode_die(mode);
}
