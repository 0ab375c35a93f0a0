// The CUDA back end's public entry points: IR -> CUDA C++ -> NVRTC -> driver API.
//
// Only plain C++ types cross this header (no CUDA, NVRTC or driver types), so
// any layer may include it. The library is always built: emitCuda() works on
// every machine; emitPtx() and compileCuda() throw evoc::Error with a sentence
// saying why when evoc was built without the CUDA toolkit (EVOC_HAVE_CUDA
// undefined) or, for compileCuda(), when no driver or device is present.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "codegen/Executable.h"
#include "ir/IR.h"

namespace evoc::codegen::cuda {

class DeviceApi; // Internal.h: device memory and launches

/// Threads per block of every generated kernel (one block per robot).
inline constexpr int kBlockSize = 128;

/// The generated CUDA C++ translation unit for all kernels of `m`, with
/// `#line` directives pointing at the .evo source (`evoc compile --emit cuda`).
std::string emitCuda(const ir::Module &m);

/// PTX of `m` for a virtual architecture such as "sm_90" (`--emit ptx`).
/// Throws evoc::Error when evoc was built without NVRTC.
std::string emitPtx(const ir::Module &m, const std::string &arch = "sm_90");

/// CUBIN of `m` for a real architecture such as "sm_80" or "sm_90", through
/// the on-disk cache of `opts` (cacheDir / useCache). Throws evoc::Error when
/// evoc was built without NVRTC.
std::string emitCubin(const ir::Module &m, const std::string &arch,
                      const CompileOptions &opts = {});

/// A module compiled for the GPU. Beyond Executable::run (one robot: host
/// buffers copied to the device, one launch, copied back), it runs a kernel
/// for a whole population in one launch, one thread block per robot.
class CudaExecutable : public Executable {
public:
  /// Runs kernel `k` for `nRobots` robots in one launch. buffers[r][b] is
  /// buffer b of robot r on the host (null where the kernel does not use it),
  /// sizes[r * nSets + s] the size of set s for robot r.
  virtual void runBatch(int k, int nRobots, void *const *const *buffers, const int64_t *sizes,
                        int64_t t) const = 0;
  /// "NVIDIA H200 (sm_90)": the device the module was loaded on.
  virtual std::string deviceName() const = 0;
  /// Device memory and launches of the loaded module (for CudaRollout).
  virtual DeviceApi &device() const = 0;
};

/// Compiles `m` for the first CUDA device of this machine and loads it.
/// Throws evoc::Error ("--backend cuda is unavailable: ...") when evoc was
/// built without CUDA, libcuda.so.1 cannot be loaded, or there is no device.
std::unique_ptr<CudaExecutable> compileCuda(const ir::Module &m, const CompileOptions &opts = {});

/// The device's arithmetic throughput in FLOP/s (an FMA counts 2), measured
/// by a microbenchmark of independent FMA chains on device 0, in f64 or f32.
/// `theoretical` gets SMs x clock x FMA units per SM for known archs (0 if
/// unknown). Throws evoc::Error when CUDA is unavailable.
double measurePeakFlops(ir::Precision p, double *theoretical = nullptr,
                        std::string *device = nullptr);

/// Whether the CUDA back end can run here; when not, `why` gets the sentence
/// compileCuda would throw. Never throws.
bool cudaAvailable(std::string *why = nullptr);

} // namespace evoc::codegen::cuda
