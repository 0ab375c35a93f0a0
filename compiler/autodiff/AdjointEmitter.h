// Internal: the state of differentiating one kernel (shared by the sweep in
// Differentiate.cpp and the per-op rules in AdjointRules.cpp).
#pragma once

#include <map>
#include <set>
#include <vector>

#include "ir/Builder.h"

namespace evoc::autodiff {

/// Builds the adjoint kernel `adj` of forward kernel `fwd`.
class AdjointEmitter {
public:
  AdjointEmitter(ir::Module &m, int fwd, ir::Kernel &adj);
  /// Emits recompute + reverse sweep into `adj`.
  void run();

private:
  using ValueId = ir::ValueId;
  // Analysis (Differentiate.cpp).
  void analyse(const ir::Block &b, std::vector<const ir::Inst *> &loops);
  bool activity(const ir::Block &b);
  void makeAdjointBuffers(const ir::Block &b);
  bool hasWork(const ir::Block &b) const;
  // Emission (Differentiate.cpp).
  void recompute(const ir::Block &b, bool tempWrites);
  void recomputeBlock(const ir::Block &b, bool tempWrites);
  void cloneInst(const ir::Inst &in);
  void reverse(const ir::Block &b);
  void reverseLoop(const ir::Block &parent, const ir::Inst &loop);
  void finishSlot(ValueId slot);
  ValueId ordinal(ValueId slot);
  // Adjoint bookkeeping.
  void addAdj(ValueId v, ValueId contribution);
  ValueId takeAdj(ValueId v); // 0 when the adjoint is known to be zero
  // Per-op rules (AdjointRules.cpp).
  void rule(const ir::Inst &in, ValueId a);
  void memoryRule(const ir::Inst &in);
  void localRule(const ir::Inst &in);
  ValueId guard(ValueId a, ValueId contribution);
  ValueId zero();
  ValueId mapped(ValueId v) const { return map_.at(v); }

  ir::Module &m_;
  int fwdIndex_;
  const ir::Kernel &fwd_;
  ir::Builder b_;
  std::vector<ValueId> map_;    // forward id -> id in adj (current scope)
  std::vector<bool> active_;    // forward id -> carries an adjoint
  std::vector<bool> activeBuf_; // buffer -> loads are active
  std::vector<int> adjBuf_;     // buffer -> its adjoint buffer, -1 none
  std::vector<const ir::Block *> defBlock_;
  std::map<ValueId, const ir::Inst *> constDefs_; // forward ConstF definitions
  std::vector<bool> usedNested_;                  // used in a block nested in its own
  std::vector<ValueId> adjSlot_;                  // forward id -> adj local slot
  std::vector<std::vector<ValueId>> adjList_;
  std::vector<bool> hasContrib_;
  // Forward locals: update sites with their loop chains, the read, the
  // adjoint of the final value, and for max/min the first arg-max ordinal.
  struct SlotInfo {
    const ir::Block *block = nullptr;
    std::vector<std::pair<const ir::Inst *, std::vector<const ir::Inst *>>> updates;
    ValueId get = 0; // a local.get result of the slot (forward id)
    bool finished = false;
    ValueId finalAdj = 0; // adj-kernel value; 0 = zero
    ValueId first = 0;    // adj-kernel value: ordinal of the arg-max/min
  };
  std::map<ValueId, SlotInfo> slots_;
  // While recomputing for an arg-max pre-pass: the site to instrument.
  const ir::Inst *hookSite_ = nullptr;
  std::set<ValueId> replaySlots_; // locals declared in the current replay
  ValueId hookSlot_ = 0, hookM_ = 0;
};

} // namespace evoc::autodiff
