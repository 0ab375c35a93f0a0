// Loads libcuda.so.1 with dlopen and resolves the driver API entry points.
#include "codegen/cuda/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <type_traits>

#include "support/Error.h"

#define EVOC_STR2(x) #x
#define EVOC_STR(x) EVOC_STR2(x) // the versioned name, e.g. cuMemAlloc_v2

namespace evoc::codegen::cuda {
namespace {

const char *kUnavailable = "--backend cuda is unavailable: ";

Driver load() {
  const char *env = std::getenv("EVOC_LIBCUDA");
  std::string lib = env && *env ? env : "libcuda.so.1";
  void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h)
    throw Error(std::string(kUnavailable) + lib +
                " not found (no NVIDIA driver on this machine); use --backend cpu.");
  Driver d;
  auto sym = [&](auto &fn, const char *name) {
    void *p = dlsym(h, name);
    if (!p)
      throw Error(std::string(kUnavailable) + lib + " has no symbol " + name +
                  " (the NVIDIA driver is too old); update the driver or use --backend cpu.");
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
#define EVOC_SYM(field, api) sym(d.field, EVOC_STR(api))
  EVOC_SYM(init, cuInit);
  EVOC_SYM(deviceGetCount, cuDeviceGetCount);
  EVOC_SYM(deviceGet, cuDeviceGet);
  EVOC_SYM(deviceGetName, cuDeviceGetName);
  EVOC_SYM(deviceGetAttribute, cuDeviceGetAttribute);
  EVOC_SYM(primaryCtxRetain, cuDevicePrimaryCtxRetain);
  EVOC_SYM(primaryCtxRelease, cuDevicePrimaryCtxRelease);
  EVOC_SYM(ctxSetCurrent, cuCtxSetCurrent);
  EVOC_SYM(ctxSynchronize, cuCtxSynchronize);
  EVOC_SYM(moduleLoadData, cuModuleLoadData);
  EVOC_SYM(moduleUnload, cuModuleUnload);
  EVOC_SYM(moduleGetFunction, cuModuleGetFunction);
  EVOC_SYM(memAlloc, cuMemAlloc);
  EVOC_SYM(memFree, cuMemFree);
  EVOC_SYM(memGetInfo, cuMemGetInfo);
  EVOC_SYM(memcpyHtoD, cuMemcpyHtoD);
  EVOC_SYM(memcpyDtoH, cuMemcpyDtoH);
  EVOC_SYM(memsetD8, cuMemsetD8);
  EVOC_SYM(launchKernel, cuLaunchKernel);
  EVOC_SYM(getErrorString, cuGetErrorString);
#undef EVOC_SYM
  CUresult rc = d.init(0);
  if (rc != CUDA_SUCCESS) {
    const char *msg = nullptr;
    d.getErrorString(rc, &msg);
    throw Error(std::string(kUnavailable) + "the NVIDIA driver failed to initialise (" +
                (msg ? msg : "unknown error") + "); check nvidia-smi or use --backend cpu.");
  }
  return d; // the library stays loaded for the life of the process
}

} // namespace

const Driver &Driver::get() {
  // Retried on every call until it succeeds, so the error is reported each
  // time; a loaded driver is kept for the process.
  static std::mutex mu;
  static std::unique_ptr<Driver> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (!loaded)
    loaded = std::make_unique<Driver>(load());
  return *loaded;
}

void Driver::check(CUresult rc, const char *call) const {
  if (rc == CUDA_SUCCESS)
    return;
  const char *msg = nullptr;
  if (getErrorString)
    getErrorString(rc, &msg);
  throw Error(std::string("CUDA error in ") + call + ": " + (msg ? msg : "unknown error") +
              " (code " + std::to_string(static_cast<int>(rc)) + ").");
}

Device Device::open(const Driver &d) {
  int count = 0;
  d.check(d.deviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0)
    throw Error(std::string(kUnavailable) +
                "the NVIDIA driver sees no CUDA device; use --backend cpu.");
  Device dv;
  d.check(d.deviceGet(&dv.dev, 0), "cuDeviceGet");
  char name[256] = {0};
  d.check(d.deviceGetName(name, sizeof name - 1, dv.dev), "cuDeviceGetName");
  dv.name = name;
  d.check(d.deviceGetAttribute(&dv.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dv.dev),
          "cuDeviceGetAttribute");
  d.check(d.deviceGetAttribute(&dv.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dv.dev),
          "cuDeviceGetAttribute");
  d.check(d.primaryCtxRetain(&dv.ctx, dv.dev), "cuDevicePrimaryCtxRetain");
  return dv;
}

} // namespace evoc::codegen::cuda
