// Test support: an Init kernel appended to a compiled module, for the tests
// that check when Init kernels run (runtime and GPU training devices).
#pragma once

#include <string>

#include "ir/IR.h"

namespace evoc::test {

/// Appends a kernel "init" of kind Init that writes param[s] = spring.rest[s]
/// + point.x[2] (the x-coordinate of point 1) for every spring s, so a test
/// sees both that it ran and that the initial state was visible to it. The
/// module must have buffers point.x, spring.rest and `param`, and a set spring.
void appendInitKernel(ir::Module &m, const std::string &param);

} // namespace evoc::test
