// Loop fission for the CPU back end: moves an expensive elementwise tail
// (tanh of a reduction, ...) out of a loop that LLVM cannot vectorise.
#pragma once

#include "ir/IR.h"

namespace evoc::codegen::cpu {

/// Splits every loop whose body is "inner loops / reductions, then pure
/// math ending in stores" (e.g. `for s: acc = sum_u W[s,u] h[u];
/// act[s] = tanh(acc + b[s])`) into two loops: the first keeps the
/// reductions and saves the values the tail needs in scratch buffers, the
/// second runs the tail, which LLVM then vectorises (LLVM vectorises only
/// innermost loops, so the tanh of an outer loop would stay scalar).
///
/// Legal because the tail only computes, loads buffers the loop never
/// writes, and stores to buffers the first part never touches. Scratch buffers are appended to
/// `m.buffers` (Temp, elem F, over the loop's set) at indices >= the module's original buffer
/// count; the lowering gives them stack storage, so the kernel ABI does not
/// change. Returns the number of loops split.
int fissionLoops(ir::Module &m);

} // namespace evoc::codegen::cpu
