// The CUDA driver API, loaded with dlopen at run time (never linked), so one
// evoc binary runs on machines with and without an NVIDIA driver.
#pragma once

#include <cuda.h> // types and prototypes only; no symbol of libcuda is linked

#include <string>

namespace evoc::codegen::cuda {

/// The driver entry points evoc uses, resolved from libcuda.so.1.
struct Driver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDeviceGetCount) deviceGetCount = nullptr;
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuDeviceGetName) deviceGetName = nullptr;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primaryCtxRelease = nullptr;
  decltype(&::cuCtxSetCurrent) ctxSetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) ctxSynchronize = nullptr;
  decltype(&::cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuMemAlloc) memAlloc = nullptr;
  decltype(&::cuMemFree) memFree = nullptr;
  decltype(&::cuMemGetInfo) memGetInfo = nullptr;
  decltype(&::cuMemcpyHtoD) memcpyHtoD = nullptr;
  decltype(&::cuMemcpyDtoH) memcpyDtoH = nullptr;
  decltype(&::cuMemsetD8) memsetD8 = nullptr;
  decltype(&::cuLaunchKernel) launchKernel = nullptr;
  decltype(&::cuGetErrorString) getErrorString = nullptr;

  /// The process-wide driver, loaded on first use: dlopen of libcuda.so.1
  /// (or $EVOC_LIBCUDA) and cuInit(0). Throws evoc::Error ("--backend cuda is
  /// unavailable: ...") when the library, a symbol or a device is missing.
  static const Driver &get();

  /// Throws evoc::Error naming the call and the driver's message unless ok.
  void check(CUresult rc, const char *call) const;
};

/// The first CUDA device and its primary context.
struct Device {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  int major = 0, minor = 0;
  std::string name;
  /// Opens device 0; throws evoc::Error when there is none.
  static Device open(const Driver &d);
};

} // namespace evoc::codegen::cuda
