// Which scratch buffers a kernel writes whole before it reads them: those
// need not be zeroed before a call (docs/architecture.md, "Scratch that is
// not zeroed"). The rollout contract (ir/Contract.h) builds its zero lists
// on it, so every runtime zeroes the same buffers.
#pragma once

#include "ir/IR.h"

namespace evoc::ir {

/// Whether kernel k of m stores every element of buffer b before any load
/// or accadd of b can read an element it has not stored, for every set
/// size: then k computes the same whatever b held before the call.
/// Conservative: false unless proven. Proven when, in the kernel's
/// top-level order, stores at index forms that are affine in constants and
/// set sizes (at top level) or in the element of a top-level loop (directly
/// in its body, stride s with all s offsets: b[e * s + base + j], j < s)
/// tile [0, size of b) exactly, before the first read of b, where a read
/// in a loop's body of the element it stored just before in that body (the
/// same index value) does not count. A buffer over two or more sets is not
/// analysed (false).
bool writesWholeFirst(const Module &m, const Kernel &k, int b);

} // namespace evoc::ir
