// The GPU training device: every robot of a chunk trained at once by the
// CUDA back end's fused rollout kernels (CudaRollout) and training kernels
// (TrainKernels.h). Per generation the chunk's bodies, parameters and initial
// states are uploaded once; per learning iteration one forward and one
// backward launch sequence over all robots, the gradient norms and the
// optimiser step stay on the device; the losses, norms and validity come back
// each iteration, the parameters only when the learning loop asks for them
// (the best of each robot, at the end).
//
// A population that does not fit in the device's free memory is trained in
// chunks that do (TrainDevice::chunk), automatically.
#pragma once

#include <memory>

#include "codegen/cuda/CudaBackend.h"
#include "core/Device.h"

namespace evoc::cuda {

/// The device of a module compiled by the CUDA back end (or its CPU
/// emulation in tests): the CPU device's learning (commands, per-step
/// losses, batches of episodes, continued episodes, Init kernels included)
/// to rounding. CudaRollout throws evoc::Error, when a batch is opened, for
/// a module whose step reads a state field it never writes.
std::unique_ptr<runtime::TrainDevice> cudaDevice(const runtime::ModuleInfo &info,
                                                 const codegen::cuda::CudaExecutable &exe);

/// The device memory training `count` robots from `first` on would take
/// (rollout tapes, tables, training records, Adam moments, best parameters).
int64_t cudaTrainBytes(const runtime::ModuleInfo &info, const runtime::Population &pop, int first,
                       int count, const runtime::TrainOptions &o);

} // namespace evoc::cuda
