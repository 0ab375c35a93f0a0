// What running the IR costs: floating-point operations per kernel call.
#pragma once

#include <cstdint>

#include "ir/IR.h"

namespace evoc::ir {

/// Floating-point operations one call of kernel `k` executes for the given
/// set sizes: add, sub, mul, div, sqrt, accumulations and scatter-adds count
/// one each, and so do calls of sin, cos, tanh, exp, log, pow; negation,
/// abs, min, max, select and comparisons count zero.
double kernelFlops(const Module &m, int k, const int64_t *sizes);

/// The multiply-adds (2 flops each) the window products (Module::products)
/// add per step: 2 x |rows| x |x| each.
double productFlopsPerStep(const Module &m, const int64_t *sizes);

} // namespace evoc::ir
