/*
 * standin_cudart.h - what the stand-in runtime adds to the CUDA runtime API.
 *
 * Test programs include this next to <cuda_runtime_api.h>.  It exists only in
 * the stand-in libcudart.so.13 (and the hidden copies inside the stand-in
 * vendor libraries); the real runtime registers kernels through
 * __cudaRegisterFunction, called from code nvcc generates.
 */
#ifndef STANDIN_CUDART_H
#define STANDIN_CUDART_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Make host_fn launchable with cudaLaunchKernel & co.  The kernel is reported
 * under `name`; at launch `body` (may be NULL) runs on the host with the
 * launch's argument array, on "device" memory that is host memory.
 */
void standin_register_kernel(const void *host_fn, const char *name, void (*body)(void **args));

/* Vendor-library bookkeeping for the ground-truth log (internal). */
void standin_rt_vendor_enter(const char *library, const char *api);
void standin_rt_vendor_exit(void);
/* Initialise the runtime and make its context current on this thread. */
int standin_rt_ensure_context(void);

#ifdef __cplusplus
}
#endif

#endif
