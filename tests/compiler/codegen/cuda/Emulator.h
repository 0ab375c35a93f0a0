// Runs generated CUDA on the CPU: the source is compiled by the host C++
// compiler with a small header mapping CUDA built-ins to C++ (one std::thread
// per CUDA thread, std::barrier for __syncthreads()), so the block-parallel
// schedule, reductions and scatter-add replays are checked without a GPU.
#pragma once

#include <memory>
#include <string>

#include "codegen/cuda/CudaBackend.h"
#include "ir/IR.h"

namespace evoc::test {

/// The module compiled from emitCuda() output for the CPU, with the batch ABI
/// of the real launcher (per-robot buffer tables, sizes, scratch).
class EmulatedExecutable : public codegen::cuda::CudaExecutable {
public:
  /// Compiles `m`'s generated CUDA into a shared library under `workDir`.
  EmulatedExecutable(const ir::Module &m, const std::string &workDir);
  ~EmulatedExecutable() override;
  void run(int k, void *const *buffers, const int64_t *sizes, int64_t t) const override;
  /// One launch over `nRobots` blocks, like CudaExecutable::runBatch.
  void runBatch(int k, int nRobots, void *const *const *buffers, const int64_t *sizes,
                int64_t t) const override;
  std::string deviceName() const override { return "CPU emulation"; }
  /// The free (and total) memory the emulated device reports; -1: unknown
  /// (the default), as a driver that cannot tell.
  void setFreeMemory(int64_t bytes);
  /// Host memory and emulated launches (for CudaRollout).
  codegen::cuda::DeviceApi &device() const override;

private:
  struct State;
  std::unique_ptr<State> s_;
};

} // namespace evoc::test
