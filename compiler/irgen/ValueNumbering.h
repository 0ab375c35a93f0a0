// Structural value numbers of the values irgen has emitted into one kernel,
// so that inlining can tell two calls with equal arguments apart from two
// calls with merely equal-looking ones (Lowerer's memo of fn calls and lets).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "ir/Builder.h"

namespace evoc::irgen {

/// Numbers values so that two values with one number are equal whenever
/// both are visible: the same pure op (constants by value) on operands of
/// equal numbers, or the same load of a buffer no kernel writes (state,
/// body, parameters, commands, windows) at an index of equal number. Every
/// other value (a load of a temporary, an accumulator read, a loop's element
/// index) gets a number of its own.
class ValueNumbering {
public:
  ValueNumbering(const ir::Module &m, const ir::Builder &b) : m_(m), b_(b) {}
  uint64_t number(ir::ValueId v);

private:
  /// v's number once its operands have theirs.
  uint64_t numberOf(ir::ValueId v, const ir::Inst *def);
  uint64_t cached(ir::ValueId v) const { return v < cache_.size() ? cache_[v] : 0; }
  /// The instruction whose value is numbered by structure, or null.
  const ir::Inst *structural(ir::ValueId v) const;

  const ir::Module &m_;
  const ir::Builder &b_;
  std::vector<uint64_t> cache_; ///< by ValueId; 0: not yet numbered
  std::map<std::vector<uint64_t>, uint64_t> table_;
  uint64_t next_ = 1;
};

} // namespace evoc::irgen
