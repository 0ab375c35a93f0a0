// The fixed part of every generated CUDA translation unit: min/max with the
// interpreter's semantics and the block-level helpers (reductions, scan).
#include "codegen/cuda/Internal.h"

namespace evoc::codegen::cuda {

const char *cudaHelpers() {
  return R"(__device__ __forceinline__ F evoc_min(F a, F b) { return b < a ? b : a; }
__device__ __forceinline__ F evoc_max(F a, F b) { return b > a ? b : a; }
// ftoi (IR.h): toward zero, saturated to int32, NaN -> 0.
__device__ __forceinline__ long long evoc_ftoi(F x) {
  return x != x ? 0LL : x <= (F)-2147483648.0 ? -2147483648LL : x >= (F)2147483647.0 ? 2147483647LL : (long long)x;
}
// OP: 0 add, 1 max, 2 min; the interpreter's local.add/max/min.
template <int OP> __device__ __forceinline__ F evoc_combine(F s, F x) {
  return OP == 0 ? s + x : OP == 1 ? (x > s ? x : s) : (x < s ? x : s);
}
// Fixed-order tree reduction over the block: deterministic.
template <int OP> __device__ F evoc_reduce(F x, F *sh) {
  const int tid = threadIdx.x;
  sh[tid] = x;
  __syncthreads();
  for (int s = EVOC_BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sh[tid] = evoc_combine<OP>(sh[tid], sh[tid + s]);
    __syncthreads();
  }
  F r = sh[0];
  __syncthreads();
  return r;
}
// Exclusive scan of cnt[0..n) into start[0..n] over the block (fixed order).
__device__ void evoc_scan(const int *cnt, int *start, long long n, int *sh) {
  const int tid = threadIdx.x;
  const long long per = (n + EVOC_BLOCK - 1) / EVOC_BLOCK, lo = tid * per;
  const long long hi = lo + per < n ? lo + per : n;
  int s = 0;
  for (long long i = lo; i < hi; ++i) s += cnt[i];
  sh[tid] = s;
  __syncthreads();
  if (tid == 0) {
    int acc = 0;
    for (int i = 0; i < EVOC_BLOCK; ++i) { int v = sh[i]; sh[i] = acc; acc += v; }
    start[n] = acc;
  }
  __syncthreads();
  int acc = sh[tid];
  for (long long i = lo; i < hi; ++i) { start[i] = acc; acc += cnt[i]; }
  __syncthreads();
}
// Fixed-order tree reduction over one warp (its 32 slots of sh): deterministic.
template <int OP> __device__ F evoc_warp_reduce(F x, F *sh) {
  const int tid = threadIdx.x, lane = tid & 31;
  sh[tid] = x;
  __syncwarp();
  for (int s = 16; s > 0; s >>= 1) {
    if (lane < s) sh[tid] = evoc_combine<OP>(sh[tid], sh[tid + s]);
    __syncwarp();
  }
  F r = sh[tid - lane];
  __syncwarp();
  return r;
}
__device__ F evoc_broadcast(F x, F *sh) {
  if (threadIdx.x == 0) sh[0] = x;
  __syncthreads();
  F r = sh[0];
  __syncthreads();
  return r;
}
)";
}

} // namespace evoc::codegen::cuda
