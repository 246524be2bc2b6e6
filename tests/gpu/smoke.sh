#!/usr/bin/env bash
# tests/gpu/smoke.sh - first contact with the GPU machine: what is there, and
# does the core (preload + kaudit run/dump) survive a raw CUDA program and
# PyTorch.  The full suite is tests/gpu/run.sh.
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/smoke.log") 2>&1
echo "== environment"
nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
nvcc --version | tail -2
python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "triton", triton.__version__)'
echo "xxhash: $(ldconfig -p | grep -i xxhash | head -2)"
echo "cuobjdump: $(command -v cuobjdump)"
ls /usr/local/cuda/extras/CUPTI/lib64/ 2>/dev/null | head; ls /usr/local/cuda/lib64 | grep -i cupti
TORCHLIB=$(python3 -c 'import os, nvidia; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)
echo "torch nvidia libs under: $TORCHLIB"
readelf -d /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so | grep -E 'NEEDED|RUNPATH' | head -30

echo "== build (core only)"
cmake -S . -B build-gpu -G Ninja -DKAUDIT_CORE_ONLY=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build-gpu || exit 1
K=$PWD/build-gpu/bin/kaudit
W=$(mktemp -d)

echo "== raw CUDA program"
cat > "$W/t.cu" <<'CU'
#include <cstdio>
#include <cublas_v2.h>
extern "C" __global__ void my_scale(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }
extern "C" __global__ void sm80_xmma_gemm_f32f32_like_custom(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
int main() {
  const int n = 256; float *a, *b, *c; cudaMalloc(&a, n*n*4); cudaMalloc(&b, n*n*4); cudaMalloc(&c, n*n*4);
  float *h = (float*)malloc(n*n*4); for (int i = 0; i < n*n; i++) h[i] = (i % 7) * 0.25f;
  cudaMemcpy(a, h, n*n*4, cudaMemcpyHostToDevice); cudaMemcpy(b, h, n*n*4, cudaMemcpyHostToDevice);
  cublasHandle_t hd; cublasCreate(&hd); float one = 1, zero = 0;
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  cudaEventRecord(e0);
  for (int r = 0; r < 3; r++) { my_scale<<<n, n>>>(a, n*n); cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n); }
  sm80_xmma_gemm_f32f32_like_custom<<<n, n>>>(c, n*n);
  cudaEventRecord(e1); cudaEventSynchronize(e1); float ms = 0; cudaEventElapsedTime(&ms, e0, e1);
  cudaMemcpy(h, c, n*n*4, cudaMemcpyDeviceToHost); double s = 0; for (int i = 0; i < n*n; i++) s += h[i];
  printf("checksum %.6e\n", s); fprintf(stderr, "elapsed %f ms\n", ms); return 0; }
CU
nvcc -O2 -arch=sm_90 -o "$W/t" "$W/t.cu" -lcublas || exit 1
"$W/t" > "$W/bare.out"
"$K" run -d "$W/s_raw" -- "$W/t" > "$W/traced.out"; echo "kaudit rc=$?"
cmp "$W/bare.out" "$W/traced.out" && echo "raw: stdout identical: $(cat "$W/bare.out")"
"$K" dump "$W/s_raw" | head -150
"$K" dump --kernels "$W/s_raw" | awk -F'\t' '{print $3=="-" ? "other" : "vendor", $7}' | sort | uniq -c

echo "== pytorch"
cat > "$W/t.py" <<'PY'
import torch, torch.nn.functional as F, hashlib
torch.manual_seed(0)
a = torch.randn(512, 512, device="cuda"); b = torch.randn(512, 512, device="cuda")
c = a @ b; d = (a.bfloat16() @ b.bfloat16()).float()
x = torch.randn(8, 16, 32, 32, device="cuda"); w = torch.randn(32, 16, 3, 3, device="cuda")
y = F.conv2d(x, w, padding=1); z = a + b
torch.cuda.nvtx.range_push("phase-candidate"); q = z * 2; torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
h = hashlib.sha256()
for t in (c, d, y, z, q): h.update(t.cpu().numpy().tobytes())
print(h.hexdigest())
PY
python3 "$W/t.py" > "$W/pbare.out"
"$K" run -d "$W/s_torch" -- python3 "$W/t.py" > "$W/ptraced.out"; echo "kaudit rc=$?"
cmp "$W/pbare.out" "$W/ptraced.out" && echo "torch: stdout identical"
"$K" dump "$W/s_torch" | head -200
"$K" dump --kernels "$W/s_torch" | awk -F'\t' '{print $3=="-" ? "other" : "vendor", substr($7,1,90)}' | sort | uniq -c
cat "$W"/s_*/kaudit.log
tar czf "$OUT/smoke-sessions.tar.gz" -C "$W" s_raw s_torch
ls -la "$OUT"
