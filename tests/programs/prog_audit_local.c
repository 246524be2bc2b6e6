/*
 * prog_audit_local.c - cuBLAS reached without the global scope, where a
 * preloaded definition is never met (test_run_audit):
 *
 *   prog_audit_local dlsym LIBDIR [LOG [CUBLAS]]   dlopen()s LIBDIR/libcudart.so.13
 *       and LIBDIR/libcublas.so.13 (or the file CUBLAS) RTLD_LOCAL, the way
 *       Python ctypes does, and calls cublasSgemm_v2 found with dlsym() and
 *       cublasSgemm_v2_64 found with dlvsym(..., "libcublas.so.13") on the
 *       library's own handle
 *   prog_audit_local deepbind LIBEXT      dlopen()s libext.so RTLD_DEEPBIND:
 *       its own PLT binds to libcublas.so.13 before the global scope
 *   prog_audit_local exec-scrubbed LIBDIR LOG   execs itself in `dlsym` mode
 *       with an empty environment
 *
 * LOG is the ground-truth log (STANDIN_LAUNCH_LOG), "-" for none.  stdout is
 * the same with and without kaudit; stderr says where each dlsym() result
 * lives ("bound NAME OBJECT"), which is what kaudit changes.  The program
 * links no CUDA library and uses no CUDA header.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*memcpy_fn)(void *, const void *, size_t, int);
typedef int (*create_fn)(void **);
typedef int (*destroy_fn)(void *);
typedef int (*sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int,
                        const float *, int, const float *, float *, int);
typedef int (*sgemm64_fn)(void *, int, int, int64_t, int64_t, int64_t, const float *,
                          const float *, int64_t, const float *, int64_t, const float *, float *,
                          int64_t);

enum { H2D = 1, D2H = 2 };

static void *need(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "%s: %s\n", what, dlerror());
        exit(2);
    }
    return p;
}

/* Tell the test which object a lookup landed in. */
static void *bound(const char *how, const char *name, void *p)
{
    Dl_info info;
    const char *object = "?";
    if (p && dladdr(p, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        object = slash ? slash + 1 : info.dli_fname;
    }
    fprintf(stderr, "bound %s %s %s\n", how, name, object);
    return p;
}

static void check(int status, const char *what)
{
    if (status != 0) {
        fprintf(stderr, "%s failed: %d\n", what, status);
        exit(2);
    }
}

static void fill(float *v, int n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 12345u;
    for (int i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (float)((int)(x >> 20) % 17 - 8) / 8.0f;
    }
}

static void print(const char *what, const float *v, int n)
{
    uint64_t h = 1469598103934665603ull;
    double sum = 0;
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    for (int i = 0; i < n; i++)
        sum += v[i];
    printf("%s: sum=%.6f fnv=%016llx\n", what, sum, (unsigned long long)h);
}

static int run_dlsym(const char *libdir, const char *cublas)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libcudart.so.13", libdir);
    void *rt = need(dlopen(path, RTLD_NOW | RTLD_LOCAL), "dlopen libcudart");
    if (cublas)
        snprintf(path, sizeof path, "%s", cublas);
    else
        snprintf(path, sizeof path, "%s/libcublas.so.13", libdir);
    void *blas = need(dlopen(path, RTLD_NOW | RTLD_LOCAL), "dlopen libcublas");

    malloc_fn dmalloc = (malloc_fn)need(dlsym(rt, "cudaMalloc"), "cudaMalloc");
    memcpy_fn dmemcpy = (memcpy_fn)need(dlsym(rt, "cudaMemcpy"), "cudaMemcpy");
    create_fn create = (create_fn)bound("dlsym", "cublasCreate_v2",
                                        need(dlsym(blas, "cublasCreate_v2"), "cublasCreate_v2"));
    destroy_fn destroy = (destroy_fn)need(dlsym(blas, "cublasDestroy_v2"), "cublasDestroy_v2");
    sgemm_fn sgemm = (sgemm_fn)bound("dlsym", "cublasSgemm_v2",
                                     need(dlsym(blas, "cublasSgemm_v2"), "cublasSgemm_v2"));
    sgemm64_fn sgemm64 = (sgemm64_fn)bound(
        "dlvsym", "cublasSgemm_v2_64",
        need(dlvsym(blas, "cublasSgemm_v2_64", "libcublas.so.13"), "cublasSgemm_v2_64"));

    enum { M = 12, N = 7, K = 5 };
    float ha[M * K], hb[K * N], hc[M * N];
    fill(ha, M * K, 41);
    fill(hb, K * N, 42);
    void *a, *b, *c, *handle;
    check(dmalloc(&a, sizeof ha), "cudaMalloc");
    check(dmalloc(&b, sizeof hb), "cudaMalloc");
    check(dmalloc(&c, sizeof hc), "cudaMalloc");
    check(dmemcpy(a, ha, sizeof ha, H2D), "cudaMemcpy");
    check(dmemcpy(b, hb, sizeof hb, H2D), "cudaMemcpy");
    check(create(&handle), "cublasCreate_v2");
    float one = 1.0f, zero = 0.0f;
    check(sgemm(handle, 0, 0, M, N, K, &one, a, M, b, K, &zero, c, M), "cublasSgemm_v2");
    check(dmemcpy(hc, c, sizeof hc, D2H), "cudaMemcpy");
    print("dlsym_sgemm", hc, M * N);
    check(sgemm64(handle, 0, 0, M, N, K, &one, a, M, b, K, &one, c, M), "cublasSgemm_v2_64");
    check(dmemcpy(hc, c, sizeof hc, D2H), "cudaMemcpy");
    print("dlvsym_sgemm_64", hc, M * N);
    check(destroy(handle), "cublasDestroy_v2");
    fflush(stdout);
    return 0;
}

static int run_deepbind(const char *libext)
{
    void *h = need(dlopen(libext, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND), "dlopen libext");
    int (*run)(void) = (int (*)(void))need(dlsym(h, "ext_run"), "ext_run");
    int rc = run();
    printf("ext_run returned %d\n", rc);
    fflush(stdout);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "dlsym") == 0) {
        if (argc > 3 && strcmp(argv[3], "-") != 0)
            setenv("STANDIN_LAUNCH_LOG", argv[3], 1);
        return run_dlsym(argv[2], argc > 4 ? argv[4] : NULL);
    }
    if (argc >= 3 && strcmp(argv[1], "deepbind") == 0)
        return run_deepbind(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "exec-scrubbed") == 0) {
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) {
            perror("readlink /proc/self/exe");
            return 2;
        }
        self[n] = '\0';
        char *child_argv[] = { self, "dlsym", argv[2], argv[3], NULL };
        char *empty[] = { NULL };
        fflush(stdout);
        execve(self, child_argv, empty);
        perror("execve");
        return 2;
    }
    fprintf(stderr, "usage: %s dlsym LIBDIR [LOG [CUBLAS]] | deepbind LIBEXT | exec-scrubbed LIBDIR LOG\n",
            argv[0]);
    return 2;
}
