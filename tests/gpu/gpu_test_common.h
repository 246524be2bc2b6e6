/*
 * gpu_test_common.h - what the raw CUDA test programs of the GPU suite share.
 *
 * The programs print only results (SHA-256 of output bytes) on stdout, so
 * that `tests/gpu/run.sh` can compare stdout bitwise between a bare run and a
 * run under `kaudit run`.  Everything the checker needs to know about what
 * the program did (launch counts, elapsed times, handles) goes to stderr as
 * lines "KAUDIT_TEST <key> <values...>"; nothing timing-dependent ever goes
 * to stdout.
 *
 * Every CUDA and cuBLAS call is checked: a failure prints the call and exits
 * with status 1 (exit status 0 proves nothing otherwise).
 */
#ifndef KAUDIT_GPU_TEST_COMMON_H
#define KAUDIT_GPU_TEST_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#define CK(call)                                                                    \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,    \
                    cudaGetErrorString(e_));                                        \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

/* After every launch: a launch error shows here, an execution error at the next sync. */
#define CK_LAUNCH() CK(cudaGetLastError())

/* ---- SHA-256 (FIPS 180-4), small and self-contained --------------------- */

struct kt_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char buf[64];
    size_t used;
};

static const uint32_t kt_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t kt_rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void kt_sha256_block(struct kt_sha256 *s, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = kt_rotr(w[i - 15], 7) ^ kt_rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = kt_rotr(w[i - 2], 17) ^ kt_rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (kt_rotr(e, 6) ^ kt_rotr(e, 11) ^ kt_rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      kt_sha256_k[i] + w[i];
        uint32_t t2 = (kt_rotr(a, 2) ^ kt_rotr(a, 13) ^ kt_rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void kt_sha256_init(struct kt_sha256 *s)
{
    static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->used = 0;
}

static void kt_sha256_update(struct kt_sha256 *s, const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    s->bytes += n;
    while (n > 0) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->buf + s->used, p, take);
        s->used += take;
        p += take;
        n -= take;
        if (s->used == 64) {
            kt_sha256_block(s, s->buf);
            s->used = 0;
        }
    }
}

/* Writes 64 hex digits and a NUL into hex. */
static void kt_sha256_hex(struct kt_sha256 *s, char hex[65])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad = 0x80, zero = 0, len[8];
    kt_sha256_update(s, &pad, 1);
    while (s->used != 56)
        kt_sha256_update(s, &zero, 1);
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    kt_sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 8 * i, 9, "%08x", s->h[i]);
}

/* Print "<label> sha256=<hex>" on stdout for a device buffer of n bytes. */
static void kt_print_device_sha256(const char *label, const void *dev, size_t n)
{
    void *host = malloc(n);
    if (!host) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    CK(cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost));
    struct kt_sha256 s;
    char hex[65];
    kt_sha256_init(&s);
    kt_sha256_update(&s, host, n);
    kt_sha256_hex(&s, hex);
    printf("%s sha256=%s\n", label, hex);
    free(host);
}

/* Self-test of the hash against the FIPS 180-4 "abc" vector. */
static void kt_sha256_selftest(void)
{
    struct kt_sha256 s;
    char hex[65];
    kt_sha256_init(&s);
    kt_sha256_update(&s, "abc", 3);
    kt_sha256_hex(&s, hex);
    if (strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") != 0) {
        fprintf(stderr, "sha256 self-test failed: %s\n", hex);
        exit(1);
    }
}

/* Deterministic values in [-1, 1) from an index and a seed (no RNG state). */
__device__ static inline float kt_hash_value(uint32_t i, uint32_t seed)
{
    uint32_t x = i * 0x9e3779b9u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return (float)(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

#endif /* KAUDIT_GPU_TEST_COMMON_H */
