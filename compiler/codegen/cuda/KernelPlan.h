// How a kernel is spread over the threads of a block: which top-level loops
// run in parallel, which locals become block reductions and which scatter-adds
// are recorded and replayed in a fixed order (no float atomics).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/cuda/DeviceApi.h"
#include "ir/IR.h"

namespace evoc::codegen::cuda {

/// The plan of one top-level loop of a kernel.
struct LoopPlan {
  /// Parallel: iterations strided over the threads of the block.
  /// Serial: thread 0 runs the loop (a dependence we cannot prove safe).
  enum class Mode { Parallel, Serial } mode = Mode::Parallel;
  /// Top-level locals updated inside the loop, with the one op updating them
  /// (LocalAdd / LocalMax / LocalMin); reduced over the block after the loop.
  std::map<ir::ValueId, ir::Op> reduced;
  /// AccAdds inside the loop whose target may be shared between iterations:
  /// recorded (index, value) in the parallel phase, replayed in loop order.
  std::set<const ir::Inst *> deferred;
  /// Deferred AccAdds replayed in parallel over the elements of a loop nested
  /// directly in this one (site -> that loop): every deferred site of their
  /// buffer sits directly in that loop with an index owned by its element, so
  /// thread j replays target slice j in the interpreter's order (e ascending).
  std::map<const ir::Inst *, const ir::Inst *> transposed;
  /// Other deferred AccAdds, all of whose buffer's sites sit directly in this
  /// loop's body: replayed in parallel through per-target incidence lists
  /// sorted by (element, site), which is the interpreter's order. Buffer ->
  /// its sites in program order. Off when EVOC_CUDA_REPLAY=serial.
  std::map<int, std::vector<const ir::Inst *>> gathered;
  /// The loops nested directly in this one, when the lanes of a warp can
  /// share each of them (inner products: they only reduce into locals of
  /// this loop's body, scatter to records, or scatter to elements owned by
  /// the pair (element, inner element)). When the set is small and the first
  /// inner loop long, a warp runs each element, its lanes splitting the inner
  /// loops, with a fixed-order warp reduction per body local (inner loop ->
  /// slot -> op). Empty: not split.
  std::map<const ir::Inst *, std::map<ir::ValueId, ir::Op>> split;
};

/// Scratch of one incidence-list replay (see LoopPlan::gathered).
struct GatherGroup {
  int buffer = -1;
  int loopSet = -1; // the parallel loop's set
  int nSites = 0;
  std::vector<int> bufferSets; // the buffer's shape, for its length
  int comps = 1;
  /// Every site's index depends only on loop elements, sizes, constants and
  /// int Body buffers (spring endpoints): the lists built at the first step of
  /// a rollout launch stay valid for the others.
  bool invariant = false;
};

/// A deferred AccAdd and the sets of the loops around it (outermost first):
/// it executes once per element of their product.
struct RecordSite {
  const ir::Inst *inst = nullptr;
  std::vector<int> loopSets;
};

/// The plan of one kernel.
struct KernelPlan {
  std::map<const ir::Inst *, LoopPlan> loops; // top-level Loop insts
  std::vector<RecordSite> sites;              // deferred AccAdds, in program order
  std::vector<GatherGroup> groups;            // incidence-list replays, in program order
  std::set<int> loaded, stored, accumulated;  // buffers by use
};

/// Plans kernel `k` of `m`. Pure analysis, no side effects.
KernelPlan planKernel(const ir::Module &m, const ir::Kernel &k);

/// Every kernel's plan, in kernel order: what the emitters, the executable
/// and the scratch sizes use, computed once per module.
std::vector<KernelPlan> planModule(const ir::Module &m);

/// emitCuda with the module's plans already made (planModule).
std::string emitCuda(const ir::Module &m, const std::vector<KernelPlan> &plans);

/// Bytes of per-robot device scratch the kernel needs for its records
/// (index as int64 and value as the module's float, each array 8-aligned),
/// then for its incidence lists (int32: 3 n + 1 + records, 8-aligned).
int64_t scratchBytes(const KernelPlan &p, ir::Precision prec, const int64_t *sizes);

} // namespace evoc::codegen::cuda
