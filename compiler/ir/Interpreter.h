// The IR interpreter: the obviously-correct ground truth every back end is
// compared against.
#pragma once

#include <cstdint>

#include "ir/IR.h"

namespace evoc::ir {

/// Runs kernel `kernel` of `m` for one robot, with the KernelFn ABI:
/// buffers[b] points at buffer b (double or float per Module::precision for
/// Type::F, int32_t for Type::I; null when the kernel does not use it),
/// sizes[s] is the size of set s, t the time index. Every memory access is
/// bounds-checked; a violation is an internal error (a compiler bug).
void interpret(const Module &m, int kernel, void *const *buffers, const int64_t *sizes, int64_t t);

} // namespace evoc::ir
