// Declarations shared by the files of the CUDA back end; not a public API.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cuda/DeviceApi.h"
#include "ir/IR.h"

namespace evoc::codegen::cuda {

/// The helpers every generated translation unit starts with (after the
/// typedef of F and EVOC_BLOCK): evoc_min/max, reductions, scan, broadcast.
const char *cudaHelpers();

/// Options NVRTC compiles generated sources with (part of the cache key).
std::vector<std::string> nvrtcOptions(const std::string &arch, bool cubin);

/// Compiles CUDA source with NVRTC: CUBIN for a real arch ("sm_90") when
/// `cubin`, else PTX for its virtual arch. A compile failure is a bug in
/// evoc: throws evoc::Error saying so, with the source saved to a file whose
/// path the message gives. `name` is used for that file's name.
std::string nvrtcCompile(const std::string &src, const std::string &name, const std::string &arch,
                         bool cubin);

/// nvrtcCompile through the on-disk cache in `cacheDir` (empty: default).
std::string cachedCompile(const std::string &src, const std::string &name, const std::string &arch,
                          bool cubin, const std::string &cacheDir, bool useCache);

/// The architecture to compile for on a device of compute capability
/// major.minor: {"sm_XY", true} (CUBIN) when NVRTC knows it, else the newest
/// arch NVRTC knows with false (PTX, JIT-compiled by the driver). Throws
/// evoc::Error when NVRTC knows no arch at or below the device's.
std::pair<std::string, bool> pickArch(int major, int minor);

/// CUDA source of the FMA microbenchmark behind measurePeakFlops.
std::string peakKernelSource(bool f64);

/// The default cache folder: $EVOC_CACHE_DIR, else $XDG_CACHE_HOME/evoc,
/// else $HOME/.cache/evoc, else /tmp/evoc-cache.
std::string defaultCacheDir();

} // namespace evoc::codegen::cuda

namespace evoc::codegen::cuda {

struct KernelPlan; // KernelPlan.h

/// The number of elements of buffer b, as a C expression over the robot's
/// set sizes (`sizes[s]`), for the generated kernels.
std::string lengthExpr(const ir::Module &m, int b);

/// CUDA source of evoc_rollout_forward, evoc_rollout_losses (with per-step
/// losses) and evoc_rollout_backward for `m` (empty when the module has no
/// Step kernel). Appended by emitCuda.
std::string emitRolloutKernels(const ir::Module &m, const RolloutInfo &info,
                               const std::vector<KernelPlan> &plans);

/// CUDA source of the training kernels (TrainKernels.h) for `m` (empty when
/// the module has no differentiated step). Appended by emitCuda.
std::string emitTrainKernels(const ir::Module &m, const RolloutInfo &info);

} // namespace evoc::codegen::cuda
