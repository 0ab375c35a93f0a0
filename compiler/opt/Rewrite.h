// Internal helpers shared by the passes: use replacement and walks.
#pragma once

#include <functional>
#include <vector>

#include "ir/IR.h"

namespace evoc::opt {

/// Replaces every operand v of the instructions in `b` (recursively) by
/// repl[v] when repl[v] != 0, following chains.
void replaceUses(ir::Block &b, const std::vector<ir::ValueId> &repl);

/// Calls f on every instruction of `b`, recursively, in program order.
void forEachInst(const ir::Block &b, const std::function<void(const ir::Inst &)> &f);

} // namespace evoc::opt
