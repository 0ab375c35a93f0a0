// The back ends a test body runs on: every one present on this machine.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/Executable.h"
#include "ir/IR.h"

namespace evoc::test {

/// One back end under test, with the relative tolerance its f64 results
/// must meet against the interpreter (0: bit for bit).
struct BackendUnderTest {
  std::string name;
  std::unique_ptr<codegen::Executable> exe;
  double rtol = 0;
};

/// The interpreter (tolerance 0), the CPU back end in strict and fast
/// floating-point modes, and CUDA when this machine has a device. Nothing is
/// cached on disk (the tests must not depend on the user's cache).
std::vector<BackendUnderTest> backendsUnderTest(const ir::Module &m, double fastRtol,
                                                double cudaRtol);

/// Whether a and b agree to `rtol` relative to max(|a|, |b|, floor) (NaN
/// agrees with NaN only; rtol 0 means bit-identical).
bool agrees(double a, double b, double rtol, double floor = 0);

} // namespace evoc::test
