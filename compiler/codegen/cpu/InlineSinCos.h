// Fast mode's sin and cos: every llvm.sin / llvm.cos call, scalar or vector,
// replaced after the O2/O3 pipeline by evoc's own inline code.
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace evoc::codegen::cpu {

/// Replaces each call of llvm.sin.* / llvm.cos.* (f64 or f32, scalar or
/// vector) in `m` by inline code: reduction by pi/2 in three parts, Cephes'
/// polynomials on [-pi/4, pi/4], the quadrant's sign and swap; f32 is
/// computed in f64. A lane with |x| > 2^21 (or NaN, inf) takes libm's value,
/// behind a branch that is never taken in practice, so every lane's result
/// depends on that lane alone (vectorised and scalar code agree bit for
/// bit). Runs after the vectoriser, which has already widened the calls.
/// Agrees with glibc to about 2e-16 relative (tests/compiler/codegen/cpu/MathTest.cpp).
void inlineSinCos(llvm::Module &m);

} // namespace evoc::codegen::cpu
