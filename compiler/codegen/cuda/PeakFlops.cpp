// measurePeakFlops: the GPU's FMA throughput, measured in the same run as a
// benchmark so "fraction of peak" divides by what this device really does.
#include <algorithm>
#include <chrono>

#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/CudaDriver.h"
#include "codegen/cuda/Internal.h"
#include "support/Error.h"

namespace evoc::codegen::cuda {
namespace {

/// 8 independent chains per thread, 4096 iterations: 65536 FMAs per thread.
const char *kSource = R"(
extern "C" __global__ void __launch_bounds__(256) evoc_peak(T *out, T seed) {
  T a0 = seed + threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
  T a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  const T m = (T)0.999999, c = (T)1e-7;
  for (int i = 0; i < 4096; ++i) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
  }
  T s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if (s == (T)-1) out[0] = s; // keeps the chains alive, never taken
}
)";

/// FP64 / FP32 FMA units per SM by compute capability (CUDA programming
/// guide, "arithmetic instructions" throughput table).
int fmaPerSm(int major, int minor, bool f64) {
  int cc = major * 10 + minor;
  if (f64)
    return cc == 80 || cc == 90 || cc == 100 ? (cc == 80 ? 32 : 64) : 2;
  if (cc == 80)
    return 64;
  return cc >= 86 ? 128 : 64;
}

} // namespace

std::string peakKernelSource(bool f64) {
  return std::string("typedef ") + (f64 ? "double" : "float") + " T;\n" + kSource;
}

double measurePeakFlops(ir::Precision p, double *theoretical, std::string *device) {
  const Driver &d = Driver::get();
  Device dev = Device::open(d);
  d.check(d.ctxSetCurrent(dev.ctx), "cuCtxSetCurrent");
  bool f64 = p == ir::Precision::F64;
  std::string src = peakKernelSource(f64);
  auto [arch, cubin] = pickArch(dev.major, dev.minor);
  std::string image = cachedCompile(src, "evoc_peak", arch, cubin, "", true);
  CUmodule mod = nullptr;
  d.check(d.moduleLoadData(&mod, image.c_str()), "cuModuleLoadData");
  CUfunction fn = nullptr;
  d.check(d.moduleGetFunction(&fn, mod, "evoc_peak"), "cuModuleGetFunction");
  int sms = 0, clockKHz = 0;
  d.check(d.deviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev.dev),
          "cuDeviceGetAttribute");
  // Deprecated on recent drivers: a failure only loses the theoretical figure.
  if (d.deviceGetAttribute(&clockKHz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev.dev) != CUDA_SUCCESS)
    clockKHz = 0;
  CUdeviceptr out = 0;
  d.check(d.memAlloc(&out, 64), "cuMemAlloc");
  double seed = 1.0;
  float seedf = 1.0f;
  void *args[] = {&out, f64 ? static_cast<void *>(&seed) : &seedf};
  const unsigned blocks = static_cast<unsigned>(sms) * 16;
  double best = 0;
  for (int rep = 0; rep < 4; ++rep) { // first run warms up clocks and caches
    auto t0 = std::chrono::steady_clock::now();
    d.check(d.launchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr),
            "cuLaunchKernel");
    d.check(d.ctxSynchronize(), "cuCtxSynchronize");
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 2.0 * 8 * 4096 * 256.0 * blocks / s);
  }
  d.memFree(out);
  d.moduleUnload(mod);
  d.primaryCtxRelease(dev.dev);
  if (theoretical)
    *theoretical = 2.0 * sms * (clockKHz * 1e3) * fmaPerSm(dev.major, dev.minor, f64);
  if (device)
    *device = dev.name + " (sm_" + std::to_string(dev.major * 10 + dev.minor) + ", " +
              std::to_string(sms) + " SMs)";
  return best;
}

} // namespace evoc::codegen::cuda
