// A whole population's rollout kept in device memory: forward (all steps in
// one launch of the fused kernel, the per-step losses in another) and
// backward (the loss adjoints, then all per-step loss and step adjoints in
// one launch), for benchmarks and GPU-resident training.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/DeviceApi.h"
#include "ir/IR.h"

namespace evoc::cuda {

using codegen::cuda::CudaExecutable;
using codegen::cuda::DeviceApi;

/// An episode's table of commands as the rollout reads it: `rows` rows of
/// `columns` values, row i in force from step i * period on (the last row
/// also later; period 0: one row), as RolloutConfig's commands.
struct CommandLayout {
  int columns = 0;
  int64_t rows = 0, period = 0;
};

/// Device memory of `nRobots` robots (ragged: sizes differ per robot) and
/// the T-state tapes of the step's state fields (full tape: T states of every
/// field per robot; checkpointing is future work, see docs/architecture.md).
class CudaRollout {
public:
  /// `sizes[r * nSets + s]`: set sizes of robot r. Throws evoc::Error when
  /// the module has no Step kernel or a field the step reads but never writes,
  /// when it reads commands and `commands` has no columns for them, and
  /// before it allocates anything when the population does not fit in the
  /// device's free memory.
  CudaRollout(const CudaExecutable &exe, const ir::Module &m, int nRobots, const int64_t *sizes,
              int64_t T, const CommandLayout &commands = {});
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
  /// Every robot's commands of the next episode: values[r] holds robot r's
  /// rows x columns values (the layout given to the constructor).
  void uploadCommands(const double *const *values);
  /// x[0] -> x[T-1] (T-1 steps, one launch), the per-step losses over the
  /// T states and their windows (one launch), then every Loss kernel once
  /// (Outputs zeroed first).
  void forward();
  /// Loss adjoints (adjoint of "loss" = 1), then the per-step loss adjoints
  /// and the step adjoints from t = T-1 to 0 in one launch. Param adjoints
  /// accumulate: zeroGradients().
  void backward();
  void zeroGradients();
  /// Launches `symbol` (a kernel with the rollout kernels' signature, such
  /// as the training kernels of TrainKernels.h) over every robot with this
  /// rollout's buffer table and sizes; `scratch`, `a`, `b` as the kernel asks.
  void launch(const std::string &symbol, uint64_t scratch, int64_t a, int64_t b);
  /// The name of tape field f (the fields the step carries, in the order the
  /// training kernels number them: TrainRecord::badField).
  const std::string &fieldName(int f) const;
  /// Field f of the rollout (its name, sets and components).
  const ir::StateField &field(int f) const;
  /// The device the rollout lives on.
  DeviceApi &device() const;
  /// Bytes of device memory held.
  int64_t deviceBytes() const;
  /// The bytes the constructor would allocate for these robots, computed
  /// from the sizes alone. The constructor refuses (evoc::Error, naming the
  /// settings to lower) when they exceed the device's free memory.
  static int64_t deviceBytesNeeded(const ir::Module &m, int nRobots, const int64_t *sizes,
                                   int64_t T, const CommandLayout &commands = {});

private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

} // namespace evoc::cuda
