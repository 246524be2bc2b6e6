/*
 * lt_summary_cost.c - what the cublasLtMatmul wrapper's operation summary
 * costs: the same 28 getter calls (4 on the matmul descriptor, 8 on each of
 * three layouts) that preload/vendor_cublaslt.c makes per call, against the
 * real libcublasLt, 1,000,000 times.  Host-only (no GPU needed):
 *
 *   gcc -O2 bench/lt_summary_cost.c -I/usr/local/cuda/include \
 *       -L/usr/local/cuda/lib64 -lcublasLt -o /tmp/lt_summary_cost
 *   LD_LIBRARY_PATH=/usr/local/cuda/lib64 /tmp/lt_summary_cost
 */
#include <cublasLt.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  cublasLtMatmulDesc_t d; cublasLtMatrixLayout_t a,b,c;
  if (cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F)) {puts("desc fail");return 1;}
  cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 512, 64, 512);
  cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, 512, 512, 512);
  cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, 512, 64, 512);
  int N=1000000; size_t w; volatile uint64_t sink=0;
  double t0=now();
  for(int i=0;i<N;i++){
    int32_t v; uint64_t u; int64_t l; uint32_t e;
    cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE,&v,sizeof v,&w); sink+=v;
    cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA,&v,sizeof v,&w); sink+=v;
    cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB,&v,sizeof v,&w); sink+=v;
    cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE,&e,sizeof e,&w); sink+=e;
    cublasLtMatrixLayout_t L[3]={a,b,c};
    for(int j=0;j<3;j++){
      cublasLtMatrixLayoutGetAttribute(L[j], CUBLASLT_MATRIX_LAYOUT_TYPE,&e,sizeof e,&w); sink+=e;
      cublasLtMatrixLayoutGetAttribute(L[j], CUBLASLT_MATRIX_LAYOUT_ROWS,&u,sizeof u,&w); sink+=u;
      cublasLtMatrixLayoutGetAttribute(L[j], CUBLASLT_MATRIX_LAYOUT_COLS,&u,sizeof u,&w); sink+=u;
      cublasLtMatrixLayoutGetAttribute(L[j], CUBLASLT_MATRIX_LAYOUT_LD,&l,sizeof l,&w); sink+=l;
      cublasLtMatrixLayoutGetAttribute(L[j], CUBLASLT_MATRIX_LAYOUT_ORDER,&v,sizeof v,&w); sink+=v;
      cublasLtMatrixLayoutGetAttribute(L[j], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,&v,sizeof v,&w); sink+=v;
      cublasLtMatrixLayoutGetAttribute(L[j], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,&l,sizeof l,&w); sink+=l;
      cublasLtMatrixLayoutGetAttribute(L[j], CUBLASLT_MATRIX_LAYOUT_BATCH_MODE,&e,sizeof e,&w); sink+=e;
    }
  }
  double t=now()-t0; printf("%.1f ns per matmul summary (28 getters)\n", t/N*1e9); return 0;}
