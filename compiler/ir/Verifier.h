// The IR verifier: types, scoping, local and buffer-write rules of IR.h.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"

namespace evoc::ir {

/// Checks every rule IR.h states; returns one message per violation
/// ("kernel step: %7 = add %3, %9: operand %9 is not defined"), empty if ok.
std::vector<std::string> verify(const Module &m);

/// Runs verify() and reports a violation as an internal error naming `after`
/// (the pass that produced the module). Does nothing unless the build has
/// EVOC_VERIFY_IR (the CMake option of the same name, on by default).
void verifyAfter(const Module &m, const std::string &after);

} // namespace evoc::ir
