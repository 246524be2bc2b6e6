/*
 * cudart.c - the stand-in CUDA runtime.
 *
 * Built twice, like the real one: as libcudart.so.13 (exported, what
 * PyTorch and dynamically linked programs use) and as a static copy linked
 * into each stand-in vendor library with every symbol hidden (the real
 * cuBLAS, cuBLASLt and cuDNN carry a static cudart whose launches never pass
 * through libcudart.so).  Each copy dlopen()s libcuda.so.1 on first use and
 * reports its calls in the RUNTIME domain through the driver's frames; the
 * driver calls it makes report themselves in the DRIVER domain.
 *
 * Kernels: standin_register_kernel(host_fn, name, body) plays the part of
 * __cudaRegisterFunction.  At the first launch of a kernel the copy loads a
 * module (a fatbin-shaped image that lists the pending kernel names) with
 * cuModuleLoadData, as the runtime loads its fatbins lazily, then launches
 * with cuLaunchKernel; the kernel record's correlation id is the runtime
 * call's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "standin_internal.h"
#include "standin_cudart.h"

#define CBID(x) CUPTI_RUNTIME_TRACE_CBID_##x

/* ---- the driver ------------------------------------------------------------------ */

static struct {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*cuStreamCreate)(CUstream *, unsigned);
    CUresult (*cuStreamDestroy)(CUstream);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuStreamQuery)(CUstream);
    CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*cuEventCreate)(CUevent *, unsigned);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventRecordWithFlags)(CUevent, CUstream, unsigned);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventQuery)(CUevent);
    CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*cuEventDestroy)(CUevent);
    CUresult (*cuModuleLoadData)(CUmodule *, const void *);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, CUstream, void **, void **);
    CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    standin_api_enter_fn api_enter;
    standin_api_exit_fn api_exit;
    CUresult (*set_body)(CUfunction, standin_body_fn, uint16_t, int32_t);
    void (*vendor_enter)(const char *, const char *);
    void (*vendor_exit)(void);
} D;

static pthread_once_t g_load_once = PTHREAD_ONCE_INIT;
static int g_loaded;

#define RESOLVE(h, field, name)                       \
    do {                                              \
        *(void **)&D.field = dlsym((h), (name));      \
        if (!D.field)                                 \
            ok = 0;                                   \
    } while (0)

static void load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return;
    int ok = 1;
    RESOLVE(h, cuInit, "cuInit");
    RESOLVE(h, cuDriverGetVersion, "cuDriverGetVersion");
    RESOLVE(h, cuDeviceGetCount, "cuDeviceGetCount");
    RESOLVE(h, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    RESOLVE(h, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    RESOLVE(h, cuCtxSetCurrent, "cuCtxSetCurrent");
    RESOLVE(h, cuCtxSynchronize, "cuCtxSynchronize");
    RESOLVE(h, cuMemAlloc, "cuMemAlloc_v2");
    RESOLVE(h, cuMemFree, "cuMemFree_v2");
    RESOLVE(h, cuMemcpy, "cuMemcpy");
    RESOLVE(h, cuMemcpyAsync, "cuMemcpyAsync");
    RESOLVE(h, cuMemsetD8, "cuMemsetD8_v2");
    RESOLVE(h, cuMemsetD8Async, "cuMemsetD8Async");
    RESOLVE(h, cuStreamCreate, "cuStreamCreate");
    RESOLVE(h, cuStreamDestroy, "cuStreamDestroy_v2");
    RESOLVE(h, cuStreamSynchronize, "cuStreamSynchronize");
    RESOLVE(h, cuStreamQuery, "cuStreamQuery");
    RESOLVE(h, cuStreamWaitEvent, "cuStreamWaitEvent");
    RESOLVE(h, cuEventCreate, "cuEventCreate");
    RESOLVE(h, cuEventRecord, "cuEventRecord");
    RESOLVE(h, cuEventRecordWithFlags, "cuEventRecordWithFlags");
    RESOLVE(h, cuEventSynchronize, "cuEventSynchronize");
    RESOLVE(h, cuEventQuery, "cuEventQuery");
    RESOLVE(h, cuEventElapsedTime, "cuEventElapsedTime_v2");
    RESOLVE(h, cuEventDestroy, "cuEventDestroy_v2");
    RESOLVE(h, cuModuleLoadData, "cuModuleLoadData");
    RESOLVE(h, cuModuleGetFunction, "cuModuleGetFunction");
    RESOLVE(h, cuLaunchKernel, "cuLaunchKernel");
    RESOLVE(h, cuLaunchKernelEx, "cuLaunchKernelEx");
    RESOLVE(h, api_enter, "standin_api_enter");
    RESOLVE(h, api_exit, "standin_api_exit");
    RESOLVE(h, set_body, "standin_function_set_body");
    RESOLVE(h, vendor_enter, "standin_vendor_enter");
    RESOLVE(h, vendor_exit, "standin_vendor_exit");
    g_loaded = ok;
}

static int driver(void)
{
    pthread_once(&g_load_once, load_driver);
    return g_loaded;
}

/* ---- frames, errors, lazy initialisation ---------------------------------------------- */

static __thread cudaError_t t_last_error;
static __thread int t_context_set;
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static CUresult g_init_result = CUDA_ERROR_NOT_INITIALIZED;
static CUcontext g_context;

static cudaError_t to_rt(CUresult r)
{
    /* The runtime codes this stand-in can produce share the driver's numbers. */
    return (cudaError_t)r;
}

static cudaError_t note(cudaError_t e)
{
    if (e != cudaSuccess)
        t_last_error = e;
    return e;
}

static void teardown(void)
{
    if (g_init_result == CUDA_SUCCESS)
        D.cuDevicePrimaryCtxRelease(0);
}

static void init_once(void)
{
    CUresult r = D.cuInit(0);
    if (r == CUDA_SUCCESS)
        r = D.cuDevicePrimaryCtxRetain(&g_context, 0);
    g_init_result = r;
    if (r == CUDA_SUCCESS)
        atexit(teardown);
}

/* The context every runtime call needs, made current on this thread. */
static cudaError_t lazy_init(void)
{
    pthread_once(&g_init_once, init_once);
    if (g_init_result != CUDA_SUCCESS)
        return to_rt(g_init_result);
    if (!t_context_set) {
        CUresult r = D.cuCtxSetCurrent(g_context);
        if (r != CUDA_SUCCESS)
            return to_rt(r);
        t_context_set = 1;
    }
    return cudaSuccess;
}

struct rt_call {
    struct standin_api_frame frame;
    cudaError_t result;
    int framed;
};

static int rt_enter(struct rt_call *c, uint32_t cbid, const char *name, const void *params,
                    const char *symbol)
{
    c->result = cudaSuccess;
    c->framed = 0;
    if (!driver()) {
        c->result = cudaErrorInsufficientDriver;
        return 0;
    }
    D.api_enter(&c->frame, STANDIN_DOMAIN_RUNTIME, cbid, name, params, &c->result, symbol);
    c->framed = 1;
    return 1;
}

static cudaError_t rt_exit(struct rt_call *c)
{
    if (c->framed)
        D.api_exit(&c->frame);
    return note(c->result);
}

#define RT_ENTER(cbid, name, params)                                          \
    struct rt_call call_;                                                     \
    if (!rt_enter(&call_, CBID(cbid), name, params, NULL))                    \
        return note(call_.result)

#define RT_INIT()                                                             \
    do {                                                                      \
        call_.result = lazy_init();                                           \
        if (call_.result != cudaSuccess)                                      \
            return rt_exit(&call_);                                           \
    } while (0)

#define RT_RETURN(expr)                                                       \
    do {                                                                      \
        call_.result = (expr);                                                \
        return rt_exit(&call_);                                               \
    } while (0)

/* ---- kernels ---------------------------------------------------------------------------- */

struct rt_kernel {
    const void *host_fn;
    char *name;
    standin_body_fn body;
    CUfunction function;
    struct rt_kernel *next;
};

static pthread_mutex_t g_kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_kernel *g_kernels;

void standin_register_kernel(const void *host_fn, const char *name, void (*body)(void **args))
{
    if (!host_fn || !name)
        return;
    pthread_mutex_lock(&g_kernels_lock);
    for (struct rt_kernel *k = g_kernels; k; k = k->next) {
        if (k->host_fn == host_fn) {
            pthread_mutex_unlock(&g_kernels_lock);
            return;
        }
    }
    struct rt_kernel *k = calloc(1, sizeof *k);
    if (k) {
        k->host_fn = host_fn;
        k->name = strdup(name);
        k->body = body;
        k->next = g_kernels;
        g_kernels = k;
    }
    pthread_mutex_unlock(&g_kernels_lock);
}

static struct rt_kernel *find_kernel(const void *host_fn)
{
    pthread_mutex_lock(&g_kernels_lock);
    struct rt_kernel *k = g_kernels;
    while (k && k->host_fn != host_fn)
        k = k->next;
    pthread_mutex_unlock(&g_kernels_lock);
    return k;
}

/* Load one module holding every registered kernel that has no function yet
 * (the runtime's lazy fatbin loading), inside the current runtime call. */
static cudaError_t load_pending_kernels(void)
{
    pthread_mutex_lock(&g_kernels_lock);
    size_t payload = 32;
    for (struct rt_kernel *k = g_kernels; k; k = k->next)
        if (!k->function)
            payload += strlen(k->name) + 1;
    payload = (payload + 7) & ~(size_t)7;
    unsigned char *image = calloc(1, 16 + payload);
    if (!image) {
        pthread_mutex_unlock(&g_kernels_lock);
        return cudaErrorMemoryAllocation;
    }
    uint32_t magic = 0xBA55ED50u;
    uint16_t version = 1, header = 16;
    uint64_t fat_size = payload;
    memcpy(image, &magic, 4);
    memcpy(image + 4, &version, 2);
    memcpy(image + 6, &header, 2);
    memcpy(image + 8, &fat_size, 8);
    char *p = (char *)image + 16;
    p += sprintf(p, "kaudit-standin-fatbin") + 1;
    for (struct rt_kernel *k = g_kernels; k; k = k->next) {
        if (!k->function) {
            strcpy(p, k->name);
            p += strlen(k->name) + 1;
        }
    }
    CUmodule module;
    CUresult r = D.cuModuleLoadData(&module, image);
    free(image);
    if (r == CUDA_SUCCESS) {
        for (struct rt_kernel *k = g_kernels; k; k = k->next) {
            if (k->function)
                continue;
            CUfunction f;
            if (D.cuModuleGetFunction(&f, module, k->name) == CUDA_SUCCESS) {
                D.set_body(f, k->body, 40, 0);
                k->function = f;
            }
        }
    }
    pthread_mutex_unlock(&g_kernels_lock);
    return to_rt(r);
}

static cudaError_t kernel_function(struct rt_kernel *k, CUfunction *out)
{
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    if (!k->function) {
        cudaError_t e = load_pending_kernels();
        if (e != cudaSuccess)
            return e;
        if (!k->function)
            return cudaErrorInvalidDeviceFunction;
    }
    *out = k->function;
    return cudaSuccess;
}

static cudaError_t launch(uint32_t cbid, const char *api, const void *params, const void *func, dim3 grid,
                          dim3 block, void **args, size_t shmem, cudaStream_t stream)
{
    struct rt_kernel *k = find_kernel(func);
    struct rt_call call_;
    if (!rt_enter(&call_, cbid, api, params, k ? k->name : NULL))
        return note(call_.result);
    RT_INIT();
    CUfunction f;
    call_.result = kernel_function(k, &f);
    if (call_.result != cudaSuccess)
        return rt_exit(&call_);
    RT_RETURN(to_rt(D.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                     (unsigned)shmem, (CUstream)stream, args, NULL)));
}

cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                       size_t sharedMem, cudaStream_t stream)
{
    cudaLaunchKernel_v7000_params p = { func, gridDim, blockDim, args, sharedMem, stream };
    return launch(CBID(cudaLaunchKernel_v7000), "cudaLaunchKernel", &p, func, gridDim, blockDim, args,
                  sharedMem, stream);
}

/* PyTorch's entry point (CUDA 13): same arguments as cudaLaunchKernel. */
cudaError_t CUDARTAPI __cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                         size_t sharedMem, cudaStream_t stream)
{
    cudaLaunchKernel_v7000_params p = { func, gridDim, blockDim, args, sharedMem, stream };
    return launch(CBID(__cudaLaunchKernel_v13000), "__cudaLaunchKernel", &p, func, gridDim, blockDim, args,
                  sharedMem, stream);
}

cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    cudaLaunchKernelExC_v11060_params p = { config, func, args };
    struct rt_kernel *k = find_kernel(func);
    struct rt_call call_;
    if (!rt_enter(&call_, CBID(cudaLaunchKernelExC_v11060), "cudaLaunchKernelExC", &p, k ? k->name : NULL))
        return note(call_.result);
    if (!config)
        RT_RETURN(cudaErrorInvalidValue);
    RT_INIT();
    CUfunction f;
    call_.result = kernel_function(k, &f);
    if (call_.result != cudaSuccess)
        return rt_exit(&call_);
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = config->gridDim.x;
    c.gridDimY = config->gridDim.y;
    c.gridDimZ = config->gridDim.z;
    c.blockDimX = config->blockDim.x;
    c.blockDimY = config->blockDim.y;
    c.blockDimZ = config->blockDim.z;
    c.sharedMemBytes = (unsigned)config->dynamicSmemBytes;
    c.hStream = (CUstream)config->stream;
    RT_RETURN(to_rt(D.cuLaunchKernelEx(&c, f, args, NULL)));
}

/* ---- versions and devices ------------------------------------------------------------------ */

cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *runtimeVersion)
{
    cudaRuntimeGetVersion_v3020_params p = { runtimeVersion };
    RT_ENTER(cudaRuntimeGetVersion_v3020, "cudaRuntimeGetVersion", &p);
    if (!runtimeVersion)
        RT_RETURN(cudaErrorInvalidValue);
    *runtimeVersion = STANDIN_RUNTIME_VERSION;
    RT_RETURN(cudaSuccess);
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int *driverVersion)
{
    cudaDriverGetVersion_v3020_params p = { driverVersion };
    RT_ENTER(cudaDriverGetVersion_v3020, "cudaDriverGetVersion", &p);
    if (!driverVersion)
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(to_rt(D.cuDriverGetVersion(driverVersion)));
}

cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
    cudaGetDeviceCount_v3020_params p = { count };
    RT_ENTER(cudaGetDeviceCount_v3020, "cudaGetDeviceCount", &p);
    if (!count)
        RT_RETURN(cudaErrorInvalidValue);
    CUresult r = D.cuInit(0);
    if (r == CUDA_SUCCESS)
        r = D.cuDeviceGetCount(count);
    else
        *count = 0;
    RT_RETURN(to_rt(r));
}

cudaError_t CUDARTAPI cudaSetDevice(int device)
{
    cudaSetDevice_v3020_params p = { device };
    RT_ENTER(cudaSetDevice_v3020, "cudaSetDevice", &p);
    if (device != 0)
        RT_RETURN(cudaErrorInvalidDevice);
    RT_INIT();
    RT_RETURN(cudaSuccess);
}

cudaError_t CUDARTAPI cudaGetDevice(int *device)
{
    cudaGetDevice_v3020_params p = { device };
    RT_ENTER(cudaGetDevice_v3020, "cudaGetDevice", &p);
    if (!device)
        RT_RETURN(cudaErrorInvalidValue);
    *device = 0;
    RT_RETURN(cudaSuccess);
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    RT_ENTER(cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize", NULL);
    RT_INIT();
    RT_RETURN(to_rt(D.cuCtxSynchronize()));
}

cudaError_t CUDARTAPI cudaGetLastError(void)
{
    cudaError_t e = t_last_error;
    t_last_error = cudaSuccess;
    if (driver()) {
        struct standin_api_frame f;
        cudaError_t r = e;
        D.api_enter(&f, STANDIN_DOMAIN_RUNTIME, CBID(cudaGetLastError_v3020), "cudaGetLastError", NULL, &r,
                    NULL);
        D.api_exit(&f);
    }
    return e;
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void)
{
    return t_last_error;
}

const char *CUDARTAPI cudaGetErrorString(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    default: return "unrecognized error code";
    }
}

const char *CUDARTAPI cudaGetErrorName(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    default: return "cudaErrorUnknown";
    }
}

/* ---- memory ---------------------------------------------------------------------------------- */

cudaError_t CUDARTAPI cudaMalloc(void **devPtr, size_t size)
{
    cudaMalloc_v3020_params p = { devPtr, size };
    RT_ENTER(cudaMalloc_v3020, "cudaMalloc", &p);
    if (!devPtr)
        RT_RETURN(cudaErrorInvalidValue);
    RT_INIT();
    if (size == 0) {
        *devPtr = NULL;
        RT_RETURN(cudaSuccess);
    }
    CUdeviceptr d = 0;
    CUresult r = D.cuMemAlloc(&d, size);
    if (r == CUDA_SUCCESS)
        *devPtr = (void *)(uintptr_t)d;
    RT_RETURN(to_rt(r));
}

cudaError_t CUDARTAPI cudaFree(void *devPtr)
{
    cudaFree_v3020_params p = { devPtr };
    RT_ENTER(cudaFree_v3020, "cudaFree", &p);
    RT_INIT();
    if (!devPtr)
        RT_RETURN(cudaSuccess);
    RT_RETURN(to_rt(D.cuMemFree((CUdeviceptr)(uintptr_t)devPtr)));
}

cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    cudaMemcpy_v3020_params p = { dst, src, count, kind };
    RT_ENTER(cudaMemcpy_v3020, "cudaMemcpy", &p);
    if ((unsigned)kind > cudaMemcpyDefault)
        RT_RETURN(cudaErrorInvalidMemcpyDirection);
    RT_INIT();
    RT_RETURN(to_rt(D.cuMemcpy((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, count)));
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                      cudaStream_t stream)
{
    cudaMemcpyAsync_v3020_params p = { dst, src, count, kind, stream };
    RT_ENTER(cudaMemcpyAsync_v3020, "cudaMemcpyAsync", &p);
    if ((unsigned)kind > cudaMemcpyDefault)
        RT_RETURN(cudaErrorInvalidMemcpyDirection);
    RT_INIT();
    RT_RETURN(to_rt(D.cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, count,
                                    (CUstream)stream)));
}

cudaError_t CUDARTAPI cudaMemset(void *devPtr, int value, size_t count)
{
    cudaMemset_v3020_params p = { devPtr, value, count };
    RT_ENTER(cudaMemset_v3020, "cudaMemset", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuMemsetD8((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count)));
}

cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    cudaMemsetAsync_v3020_params p = { devPtr, value, count, stream };
    RT_ENTER(cudaMemsetAsync_v3020, "cudaMemsetAsync", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuMemsetD8Async((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value, count,
                                      (CUstream)stream)));
}

/* ---- streams --------------------------------------------------------------------------------- */

/*
 * cudaStreamCreate and cudaStreamCreateWithFlags (likewise the two event
 * creates below) differ only in their API frame (cbid, params struct), which
 * the caller opens with RT_ENTER; the body after it is the same: reject a NULL
 * out pointer before initialising, then make the driver call nested in the
 * runtime frame, and close the frame.
 */
static cudaError_t finish_stream_create(struct rt_call *call, cudaStream_t *pStream, unsigned int flags)
{
    if (!pStream)
        call->result = cudaErrorInvalidValue;
    else if ((call->result = lazy_init()) == cudaSuccess)
        call->result = to_rt(D.cuStreamCreate((CUstream *)pStream, flags));
    return rt_exit(call);
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream)
{
    cudaStreamCreate_v3020_params p = { pStream };
    RT_ENTER(cudaStreamCreate_v3020, "cudaStreamCreate", &p);
    return finish_stream_create(&call_, pStream, 0);
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    cudaStreamCreateWithFlags_v5000_params p = { pStream, flags };
    RT_ENTER(cudaStreamCreateWithFlags_v5000, "cudaStreamCreateWithFlags", &p);
    return finish_stream_create(&call_, pStream, flags);
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream)
{
    cudaStreamDestroy_v5050_params p = { stream };
    RT_ENTER(cudaStreamDestroy_v5050, "cudaStreamDestroy", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuStreamDestroy((CUstream)stream)));
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream)
{
    cudaStreamSynchronize_v3020_params p = { stream };
    RT_ENTER(cudaStreamSynchronize_v3020, "cudaStreamSynchronize", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuStreamSynchronize((CUstream)stream)));
}

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream)
{
    cudaStreamQuery_v3020_params p = { stream };
    RT_ENTER(cudaStreamQuery_v3020, "cudaStreamQuery", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuStreamQuery((CUstream)stream)));
}

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    cudaStreamWaitEvent_v3020_params p = { stream, event, flags };
    RT_ENTER(cudaStreamWaitEvent_v3020, "cudaStreamWaitEvent", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuStreamWaitEvent((CUstream)stream, (CUevent)event, flags)));
}

/* ---- events ---------------------------------------------------------------------------------- */

/* The shared body of cudaEventCreate and ...WithFlags (see finish_stream_create). */
static cudaError_t finish_event_create(struct rt_call *call, cudaEvent_t *event, unsigned int flags)
{
    if (!event)
        call->result = cudaErrorInvalidValue;
    else if ((call->result = lazy_init()) == cudaSuccess)
        call->result = to_rt(D.cuEventCreate((CUevent *)event, flags));
    return rt_exit(call);
}

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event)
{
    cudaEventCreate_v3020_params p = { event };
    RT_ENTER(cudaEventCreate_v3020, "cudaEventCreate", &p);
    return finish_event_create(&call_, event, 0);
}

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    cudaEventCreateWithFlags_v3020_params p = { event, flags };
    RT_ENTER(cudaEventCreateWithFlags_v3020, "cudaEventCreateWithFlags", &p);
    return finish_event_create(&call_, event, flags);
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    cudaEventRecord_v3020_params p = { event, stream };
    RT_ENTER(cudaEventRecord_v3020, "cudaEventRecord", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuEventRecord((CUevent)event, (CUstream)stream)));
}

cudaError_t CUDARTAPI cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    cudaEventRecordWithFlags_v11010_params p = { event, stream, flags };
    RT_ENTER(cudaEventRecordWithFlags_v11010, "cudaEventRecordWithFlags", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuEventRecordWithFlags((CUevent)event, (CUstream)stream, flags)));
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
    cudaEventSynchronize_v3020_params p = { event };
    RT_ENTER(cudaEventSynchronize_v3020, "cudaEventSynchronize", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuEventSynchronize((CUevent)event)));
}

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event)
{
    cudaEventQuery_v3020_params p = { event };
    RT_ENTER(cudaEventQuery_v3020, "cudaEventQuery", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuEventQuery((CUevent)event)));
}

/* CUDA 13's cudaEventElapsedTime is the 12.8 "_v2" entry (cbid _v12080). */
cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    cudaEventElapsedTime_v12080_params p = { ms, start, end };
    RT_ENTER(cudaEventElapsedTime_v12080, "cudaEventElapsedTime", &p);
    if (!ms)
        RT_RETURN(cudaErrorInvalidValue);
    RT_INIT();
    RT_RETURN(to_rt(D.cuEventElapsedTime(ms, (CUevent)start, (CUevent)end)));
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event)
{
    cudaEventDestroy_v3020_params p = { event };
    RT_ENTER(cudaEventDestroy_v3020, "cudaEventDestroy", &p);
    RT_INIT();
    RT_RETURN(to_rt(D.cuEventDestroy((CUevent)event)));
}

/* ---- for the vendor libraries that carry this runtime statically ----------------------------- */

/* Make the primary context current on this thread, as the static runtime
 * inside a vendor library does before it talks to the driver itself. */
int standin_rt_ensure_context(void)
{
    if (!driver())
        return (int)cudaErrorInsufficientDriver;
    return (int)lazy_init();
}

void standin_rt_vendor_enter(const char *library, const char *api)
{
    if (driver())
        D.vendor_enter(library, api);
}

void standin_rt_vendor_exit(void)
{
    if (driver())
        D.vendor_exit();
}
