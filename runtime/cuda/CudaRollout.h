// A whole population's rollout kept in device memory: forward (all steps in
// one launch of the fused kernel) and backward (the loss adjoints, then all
// step adjoints in one launch), for benchmarks and GPU-resident training.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/DeviceApi.h"
#include "ir/IR.h"

namespace evoc::runtime::cuda {

using codegen::cuda::CudaExecutable;
using codegen::cuda::DeviceApi;

/// Device memory of `nRobots` robots (ragged: sizes differ per robot) and
/// the T-state tapes of the step's state fields (full tape: T states of every
/// field per robot; checkpointing is future work, see docs/architecture.md).
class CudaRollout {
public:
  /// `sizes[r * nSets + s]`: set sizes of robot r. Throws evoc::Error when
  /// the module has no Step kernel or a field the step reads but never writes,
  /// and before it allocates anything when the population does not fit in
  /// the device's free memory.
  CudaRollout(const CudaExecutable &exe, const ir::Module &m, int nRobots, const int64_t *sizes,
              int64_t T);
  ~CudaRollout();
  CudaRollout(const CudaRollout &) = delete;
  CudaRollout &operator=(const CudaRollout &) = delete;

  /// Copies buffer b of robot r from the host: Body, Param, or a state field
  /// (its State or NextState buffer), which sets x[0].
  void upload(int buffer, int robot, const void *host);
  /// Copies buffer b of robot r to the host; a state field gives x[T-1].
  void download(int buffer, int robot, void *host) const;
  /// upload / download of buffer b for every robot at once (host[r] for
  /// robot r): one copy for the population, except for state fields.
  void uploadAll(int buffer, const void *const *host);
  void downloadAll(int buffer, void *const *host) const;
  /// x[0] -> x[T-1] (T-1 steps, one launch), then every Loss kernel once
  /// (Outputs zeroed first). LossStep kernels are not supported.
  void forward();
  /// Loss adjoints (adjoint of "loss" = 1), then the step adjoints from
  /// t = T-2 to 0 in one launch. Param adjoints accumulate: zeroGradients().
  void backward();
  void zeroGradients();
  /// Launches `symbol` (a kernel with the rollout kernels' signature, such
  /// as the training kernels of TrainKernels.h) over every robot with this
  /// rollout's buffer table and sizes; `scratch`, `a`, `b` as the kernel asks.
  void launch(const std::string &symbol, uint64_t scratch, int64_t a, int64_t b);
  /// The name of tape field f (the fields the step carries, in the order the
  /// training kernels number them: TrainRecord::badField).
  const std::string &fieldName(int f) const;
  /// The device the rollout lives on.
  DeviceApi &device() const;
  /// Bytes of device memory held.
  int64_t deviceBytes() const;
  /// The bytes the constructor would allocate for these robots, computed
  /// from the sizes alone. The constructor refuses (evoc::Error, naming the
  /// settings to lower) when they exceed the device's free memory.
  static int64_t deviceBytesNeeded(const ir::Module &m, int nRobots, const int64_t *sizes,
                                   int64_t T);

private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

} // namespace evoc::runtime::cuda
