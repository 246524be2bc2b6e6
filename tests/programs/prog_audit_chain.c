/*
 * prog_audit_chain.c - an interposer chain under kaudit (test_run_audit).
 * The program links libchain.so (which defines malloc/free and looks things
 * up with RTLD_NEXT / RTLD_DEFAULT), then libcublas.so.13 and libcudart.so.13.
 * It prints, on stdout, where the non-vendor lookups land (they must land in
 * the same objects with and without kaudit), the results of one SGEMM made by
 * libchain through dlsym(RTLD_NEXT, "cublasSgemm_v2") and one through
 * dlsym(RTLD_DEFAULT, ...), and whether libchain's malloc ever recursed.
 * stderr gets "bound HOW NAME OBJECT" for the vendor lookups, which kaudit
 * changes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

void *chain_next_malloc(void);
unsigned long chain_malloc_calls(void);
int chain_recursed(void);
void *chain_lookup(int use_next, const char *name);
int chain_sgemm(int use_next, void *handle, int m, int n, int k, const float *a, const float *b,
                float *c);

static const char *object_of(void *p)
{
    Dl_info info;
    if (!p || !dladdr(p, &info) || !info.dli_fname)
        return "?";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

#define CHECK(call)                                                                               \
    do {                                                                                          \
        int s_ = (int)(call);                                                                     \
        if (s_ != 0) {                                                                            \
            fprintf(stderr, "%s failed: %d\n", #call, s_);                                        \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

static void print(const char *what, const float *v, int n)
{
    unsigned long long h = 1469598103934665603ull;
    double sum = 0;
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    for (int i = 0; i < n; i++)
        sum += v[i];
    printf("%s: sum=%.6f fnv=%016llx\n", what, sum, h);
}

int main(void)
{
    /* Non-vendor lookups: identical with and without kaudit. */
    free(malloc(64));
    printf("main RTLD_DEFAULT malloc: %s\n", object_of(dlsym(RTLD_DEFAULT, "malloc")));
    printf("main RTLD_NEXT malloc: %s\n", object_of(dlsym(RTLD_NEXT, "malloc")));
    printf("chain RTLD_DEFAULT malloc: %s\n", object_of(chain_lookup(0, "malloc")));
    printf("chain RTLD_NEXT malloc: %s\n", object_of(chain_lookup(1, "malloc")));
    printf("chain next malloc in use: %s\n", object_of(chain_next_malloc()));
    printf("chain RTLD_NEXT free: %s\n", object_of(chain_lookup(1, "free")));
    /* A cuBLAS function kaudit does not wrap is never redirected. */
    printf("chain RTLD_NEXT cublasCreate_v2: %s\n", object_of(chain_lookup(1, "cublasCreate_v2")));

    /* Vendor lookups: kaudit sends them to its wrappers. */
    fprintf(stderr, "bound chain-RTLD_NEXT cublasSgemm_v2 %s\n",
            object_of(chain_lookup(1, "cublasSgemm_v2")));
    fprintf(stderr, "bound chain-RTLD_DEFAULT cublasSgemm_v2 %s\n",
            object_of(chain_lookup(0, "cublasSgemm_v2")));

    enum { M = 9, N = 6, K = 4 };
    float ha[M * K], hb[K * N], hc[M * N];
    for (int i = 0; i < M * K; i++)
        ha[i] = (float)((i * 7) % 11 - 5) / 4.0f;
    for (int i = 0; i < K * N; i++)
        hb[i] = (float)((i * 5) % 13 - 6) / 4.0f;
    float *a, *b, *c;
    CHECK(cudaMalloc((void **)&a, sizeof ha));
    CHECK(cudaMalloc((void **)&b, sizeof hb));
    CHECK(cudaMalloc((void **)&c, sizeof hc));
    CHECK(cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice));
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    CHECK(chain_sgemm(1, h, M, N, K, a, b, c));
    CHECK(cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost));
    print("chain RTLD_NEXT sgemm", hc, M * N);
    CHECK(chain_sgemm(0, h, N, M, K, b, a, c));
    CHECK(cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost));
    print("chain RTLD_DEFAULT sgemm", hc, M * N);
    CHECK(cublasDestroy(h));
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);

    printf("chain malloc used: %s\n", chain_malloc_calls() > 0 ? "yes" : "no");
    printf("chain malloc recursed: %s\n", chain_recursed() ? "yes" : "no");
    fflush(stdout);
    return 0;
}
