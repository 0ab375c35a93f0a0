// What the runtime's GPU layer (runtime/cuda) needs of the CUDA back end
// beyond CudaBackend.h: device memory and launches, the fused rollout's
// state fields, and the kernels' symbols. Plain C++ types only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/Contract.h"
#include "ir/IR.h"

namespace evoc::codegen::cuda {

/// The symbol of the __global__ function of kernel `k` ("evoc_k3").
std::string kernelSymbol(int k);

/// A per-step loss kernel (LossStep) and its adjoint (-1: none).
struct RolloutLossStep {
  int kernel = -1, adjoint = -1;
};

/// What the fused rollout kernels and CudaRollout need to know about a
/// module: its rollout contract (ir/Contract.h, the analysis the CPU runtime
/// lays memory out by) as the fused kernels use it. A state field's State
/// (time Current) and NextState buffers point into one tape of T states;
/// their adjoints into a ring of adjSlots states.
struct RolloutInfo {
  int step = -1, stepAdj = -1; // kernel indices (-1: none)
  /// The fields the step reads or writes (ir::StateField::taped), in the
  /// contract's order.
  std::vector<ir::StateField> fields;
  // Zeroed before every step: the contract's scratchZero of the step and
  // its keptZero (bound to the step's tape block); before every step
  // adjoint: scratchZero of the step adjoint.
  std::vector<int> stepZero;
  std::vector<int> adjZero;
  std::vector<int> kept; // Temps kept per step (Buffer::tape): a tape of T - 1 steps each
  /// The per-step losses in kernel order (the CPU rollout's order), run by
  /// evoc_rollout_losses and, interleaved with the step adjoints, by
  /// evoc_rollout_backward.
  std::vector<RolloutLossStep> lossSteps;
  /// Adjoint states each field's adjoint ring holds: the largest offset d a
  /// loss reads (x[t - d]) + 2, as the CPU rollout's adjoint ring.
  int adjSlots = 2;
  /// Reduced windows (the comps of loss.sample): one kWindowRecordBytes
  /// record per slot and robot, written by evoc_rollout_losses.
  int windowSlots = 0;
};

/// The fused rollout's view of a module's contract.
RolloutInfo rolloutInfo(const ir::RolloutContract &c);

/// Bytes of one reduced window's record in device memory: its value and
/// adjoint (doubles), the time of its extreme and its count of samples.
inline constexpr int kWindowRecordBytes = 32;

/// Bytes before the values of a robot's command block: its period, rows,
/// columns per row and the rollout's number of states T (int64 each).
inline constexpr int kCommandHeaderBytes = 32;

/// The one signature of every __global__ function the back end emits, and
/// so of every launch: X(CUDA type, host type of the launch's argument,
/// name). The generated source's parameters are `evoc_<name>`
/// (kernelParamsSource); a launch passes a KernelArgs.
#define EVOC_KERNEL_PARAMS(X)                                                                      \
  X("void *const *", uint64_t, buffers)   /* the robots' buffer tables, nBuffers each */           \
  X("const long long *", uint64_t, sizes) /* the robots' set sizes, nSets each */                  \
  X("char *const *", uint64_t, scratch)   /* each robot's scratch */                               \
  X("long long", int64_t, a)              /* kernel-specific numbers */                            \
  X("long long", int64_t, b)

/// A launch's arguments: device addresses and numbers, in signature order.
struct KernelArgs {
#define EVOC_X(cuda, host, name) host name;
  EVOC_KERNEL_PARAMS(EVOC_X)
#undef EVOC_X
};

/// The signature's parameter list as CUDA source
/// ("void *const *evoc_buffers, const long long *evoc_sizes, ...").
std::string kernelParamsSource();

/// The head of a __global__ function with that signature, up to its `{`.
std::string kernelHead(const std::string &symbol);

/// A device's memory in bytes; -1 where it cannot tell.
struct DeviceMemory {
  int64_t free = -1, total = -1;
};

/// Device memory and launches, behind which the real driver or a CPU
/// emulation sits (tests). Addresses are device addresses as integers.
class DeviceApi {
public:
  virtual ~DeviceApi() = default;
  /// Free and total memory now (the driver: cuMemGetInfo); unknown by default.
  virtual DeviceMemory memory() { return {}; }
  virtual uint64_t alloc(size_t bytes) = 0;
  virtual void free(uint64_t p) = 0;
  virtual void upload(uint64_t dst, const void *src, size_t n) = 0;
  virtual void download(void *dst, uint64_t src, size_t n) = 0;
  virtual void zero(uint64_t dst, size_t n) = 0;
  /// Launches `symbol` over `grid` blocks with the one kernel signature
  /// (EVOC_KERNEL_PARAMS) and waits for it.
  virtual void launch(const std::string &symbol, int grid, const KernelArgs &args) = 0;
};

/// Refuses (evoc::Error) an allocation of `needed` bytes that exceeds the
/// free memory `mem` reports, with a sentence saying what needs it (`what`,
/// "the CUDA rollout of 1000 robots x 1000 steps"), how much, how much is
/// free, and which settings to lower (`lower`). Nothing when it fits or the
/// free memory is unknown.
void checkDeviceMemory(const DeviceMemory &mem, int64_t needed, const std::string &what,
                       const std::string &lower);

/// The back end's plan of every kernel of a module, made once: what the
/// runtime's GPU layer asks of it.
class KernelPlans {
public:
  explicit KernelPlans(const ir::Module &m);
  ~KernelPlans();
  KernelPlans(const KernelPlans &) = delete;
  KernelPlans &operator=(const KernelPlans &) = delete;
  /// The per-robot device scratch the kernels need (their records and
  /// incidence lists): the most any one kernel needs, for given set sizes.
  int64_t maxScratchBytes(const int64_t *sizes) const;

private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

} // namespace evoc::codegen::cuda
